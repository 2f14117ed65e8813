//! Whether a model can run on this machine, decided before llama.cpp touches it: the memory
//! the model will take against the memory free, and the instruction sets the binary was
//! built for against those the CPU has. Pure, but for reading `/proc/meminfo` and asking
//! the CPU.

use crate::providers::gguf::GgufInfo;

/// What a loaded model holds in memory, estimated from its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// The weights: the file, mapped and paged in as the model runs.
    pub weights: u64,
    /// Keys and values for every position of the context, at 16 bits each.
    pub kv_cache: u64,
    /// Scratch buffers for evaluation, and the rest.
    pub overhead: u64,
}

impl Footprint {
    pub fn total(&self) -> u64 {
        self.weights + self.kv_cache + self.overhead
    }
}

/// Scratch space grows with the model but never below this.
const MIN_OVERHEAD: u64 = 128 << 20;

/// The context Skald gives a model: what it was trained for, at most `cap` (the
/// setting), and never under 256 tokens.
pub fn context_for(info: &GgufInfo, cap: u32) -> u32 {
    let trained = info.context_length.unwrap_or(u64::from(cap));
    u32::try_from(u64::from(cap).min(trained).max(256)).unwrap_or(cap)
}

/// The memory a model with `info` takes with a context of `n_ctx` positions. Without the
/// attention head counts every layer is assumed to keep a full embedding per position,
/// which overestimates grouped-query models: refusing a model that would fit is the
/// lesser harm.
pub fn footprint(info: &GgufInfo, n_ctx: u64) -> Footprint {
    let layers = info.block_count.unwrap_or(32);
    let embedding = info.embedding_length.unwrap_or(4096);
    let kv_width = match (info.head_count, info.head_count_kv) {
        (Some(heads), Some(kv_heads)) if heads > 0 && kv_heads <= heads => embedding * kv_heads / heads,
        _ => embedding,
    };
    let kv_cache = 2 * layers * n_ctx * kv_width * 2;
    Footprint { weights: info.file_size, kv_cache, overhead: (info.file_size / 10).max(MIN_OVERHEAD) }
}

/// Memory the kernel says can be had without swapping, in bytes.
pub fn available_memory() -> Option<u64> {
    if cfg!(debug_assertions)
        && let Some(bytes) = std::env::var("SKALD_TEST_MEMORY_AVAILABLE").ok().and_then(|v| v.parse().ok())
    {
        return Some(bytes);
    }
    parse_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemAvailable` from the text of `/proc/meminfo`.
pub fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|line| line.starts_with("MemAvailable:"))?;
    let mut words = line.split_whitespace().skip(1);
    let amount: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => amount.checked_mul(1024),
        Some(_) => None,
    }
}

/// Why a model of `footprint` cannot load with `available` bytes free (of which `freed`
/// come back when the model now loaded is let go), if it cannot. Unknown free memory —
/// not Linux — lets the load go ahead.
pub fn check_memory(name: &str, footprint: Footprint, available: Option<u64>, freed: u64) -> Result<(), String> {
    let Some(available) = available else { return Ok(()) };
    let free = available.saturating_add(freed);
    if footprint.total() <= free {
        return Ok(());
    }
    Err(format!(
        "{name} needs about {} of memory and this computer has {} free. Close other programs and try \
         again, or ask an administrator for a smaller model.",
        gib(footprint.total()),
        gib(free)
    ))
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / (1u64 << 30) as f64)
}

/// The instruction sets llama.cpp's CPU code is compiled to use: ggml's own baseline when
/// it is not built for the builder's CPU (`GGML_NATIVE` off; `build.rs` refuses
/// `target-cpu=native`), roughly x86-64-v3. AVX-512 and AMX are never compiled in: a CPU
/// that reports them may not have them granted by its OS or hypervisor (AMX faulted that
/// way), and the baseline runs everywhere these do. Skald's Rust code targets plain
/// x86-64; only llama.cpp needs these, and only the model worker runs it.
pub const COMPILED_FOR: &[&str] = &["sse4.2", "avx", "avx2", "fma", "f16c", "bmi2"];

/// Whether this CPU runs instructions of `feature`, granted by the OS: for the AVX extensions
/// the standard library also checks that the OS saves the registers (XCR0).
pub fn cpu_has(feature: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match feature {
            "sse4.2" => std::arch::is_x86_feature_detected!("sse4.2"),
            "avx" => std::arch::is_x86_feature_detected!("avx"),
            "avx2" => std::arch::is_x86_feature_detected!("avx2"),
            "fma" => std::arch::is_x86_feature_detected!("fma"),
            "f16c" => std::arch::is_x86_feature_detected!("f16c"),
            "bmi2" => std::arch::is_x86_feature_detected!("bmi2"),
            "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
            "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
            "avx512vnni" => std::arch::is_x86_feature_detected!("avx512vnni"),
            "avxvnni" => std::arch::is_x86_feature_detected!("avxvnni"),
            _ => false,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = feature;
        true
    }
}

/// Why no model can run on the CPU this process runs on, if it lacks what llama.cpp was
/// compiled for ([`COMPILED_FOR`]).
pub fn check_this_cpu() -> Result<(), String> {
    check_cpu(COMPILED_FOR, cpu_has)
}

/// Why the model cannot run on this CPU, if the build needs instructions it lacks.
pub fn check_cpu(compiled: &[&str], has: impl Fn(&str) -> bool) -> Result<(), String> {
    let missing: Vec<&str> = compiled.iter().copied().filter(|feature| !has(feature)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the built-in model needs a processor with {}, which this computer's processor lacks (most made \
         since 2013 have them). Connect a model server instead in Administration → Models.",
        missing.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(file_size: u64) -> GgufInfo {
        GgufInfo {
            version: 3,
            tensor_count: 1,
            architecture: Some("llama".into()),
            name: None,
            context_length: Some(8192),
            block_count: Some(30),
            embedding_length: Some(576),
            head_count: Some(9),
            head_count_kv: Some(3),
            file_type: Some(3),
            has_chat_template: true,
            template_takes_tools: false,
            file_size,
        }
    }

    #[test]
    fn the_context_is_the_trained_one_within_the_setting_and_at_least_256() {
        let trained = |n: Option<u64>| GgufInfo { context_length: n, ..info(1) };
        assert_eq!(context_for(&trained(Some(8192)), 4096), 4096);
        assert_eq!(context_for(&trained(Some(2048)), 4096), 2048);
        assert_eq!(context_for(&trained(Some(128)), 4096), 256);
        assert_eq!(context_for(&trained(None), 4096), 4096);
    }

    #[test]
    fn the_kv_cache_follows_the_key_value_heads_and_the_context() {
        // SmolLM2-135M: 30 layers, 576 wide, 3 of 9 heads keep keys and values.
        let small = footprint(&info(98_362_432), 8192);
        assert_eq!(small.kv_cache, 2 * 30 * 8192 * 192 * 2);
        assert_eq!(footprint(&info(98_362_432), 4096).kv_cache * 2, small.kv_cache);
        assert_eq!(small.overhead, MIN_OVERHEAD, "a small model still needs scratch space");
        let unknown_heads = GgufInfo { head_count_kv: None, ..info(98_362_432) };
        assert_eq!(footprint(&unknown_heads, 8192).kv_cache, small.kv_cache * 3, "unknown heads count in full");
    }

    #[test]
    fn a_model_bigger_than_free_memory_is_refused_with_both_sizes() {
        let needed = footprint(&info(4 << 30), 8192);
        let refused = check_memory("Qwen 4B", needed, Some(2 << 30), 0).unwrap_err();
        assert!(refused.contains("Qwen 4B needs about 4.") && refused.contains("2.0 GB free"), "{refused}");
        assert!(check_memory("Qwen 4B", needed, Some(16 << 30), 0).is_ok());
        assert!(check_memory("Qwen 4B", needed, Some(2 << 30), 4 << 30).is_ok(), "the model let go makes room");
        assert!(check_memory("Qwen 4B", needed, None, 0).is_ok(), "unknown free memory does not block");
    }

    #[test]
    fn meminfo_gives_available_bytes() {
        let text = "MemTotal:       24567892 kB\nMemFree:         1234 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(parse_meminfo(text), Some(20_000_000 * 1024));
        assert_eq!(parse_meminfo("MemTotal: 5 kB\n"), None);
        assert_eq!(parse_meminfo("MemAvailable: many kB\n"), None);
    }

    #[test]
    fn a_cpu_without_the_built_for_instructions_is_refused_naming_them() {
        let refused = check_cpu(&["avx", "avx2", "fma"], |feature| feature == "avx").unwrap_err();
        assert!(refused.contains("avx2, fma") && refused.contains("Administration → Models"), "{refused}");
        assert!(check_cpu(&["avx", "avx2"], |_| true).is_ok());
        assert!(check_cpu(&[], |_| false).is_ok());
    }

    #[test]
    fn this_machine_has_what_this_build_was_compiled_for() {
        assert!(check_this_cpu().is_ok());
    }

    #[test]
    fn nothing_beyond_the_baseline_is_compiled_in() {
        for feature in COMPILED_FOR {
            assert!(!feature.starts_with("avx512") && !feature.starts_with("amx"), "{feature}");
        }
        // The Rust code is plain x86-64: at most v2 (SSE4.2, POPCNT) may be assumed.
        const { assert!(!cfg!(target_feature = "avx"), "built with AVX for Rust code: target-cpu set?") };
    }
}
