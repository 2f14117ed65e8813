//! Build script: make sure the web assets exist before the binary embeds them, tell cargo
//! to rebuild when the migrations change, keep the build portable, and run tauri-build for
//! the desktop shell.
//!
//! It does not watch `web/dist`: a rerun of this script recompiles the whole library, and
//! the binary's embedded copy (`src-tauri/web.rs`) is already rebuilt by rustc's own
//! tracking of each embedded file.

use std::path::Path;

fn main() {
    // sqlx::migrate! embeds the files at compile time but does not watch the folder.
    println!("cargo:rerun-if-changed=database/migrations");
    if !Path::new("web/dist/index.html").exists() {
        eprintln!(
            "web/dist is missing: build the web assets first with `npm --prefix web ci && npm --prefix web run build` (./build.sh and ./test.sh do this)"
        );
        std::process::exit(1);
    }

    portable();

    #[cfg(feature = "desktop")]
    {
        // Tauri does not notice changes to its capabilities and icons by itself.
        println!("cargo:rerun-if-changed=src-tauri");
        println!("cargo:rerun-if-changed=tauri.conf.json");
        let attributes = tauri_build::Attributes::new().capabilities_path_pattern("./src-tauri/capabilities/**/*");
        if let Err(err) = tauri_build::try_build(attributes) {
            eprintln!("tauri-build failed: {err:#}");
            std::process::exit(1);
        }
    }
}

/// Refuses to build for the builder's CPU, or for more than x86-64-v2. llama.cpp's build
/// reads `target-cpu=native` from the Rust flags and then compiles ggml for every
/// extension the builder has — AMX
/// included, whose kernels faulted and took the server down — and the binary would not
/// start on a CPU without them. Without it ggml is compiled for its stated baseline
/// (SSE4.2, AVX, AVX2, FMA, F16C, BMI2; `providers::local::fit::COMPILED_FOR`), checked at
/// run time before a model loads, and the Rust code for plain x86-64.
fn portable() {
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let cpu = flags.split('\x1f').find_map(|flag| flag.split("target-cpu=").nth(1));
    if let Some(cpu) = cpu.filter(|cpu| !matches!(*cpu, "x86-64" | "x86-64-v2")) {
        eprintln!(
            "Skald is built to run on any x86-64 computer: remove `-C target-cpu={cpu}` from RUSTFLAGS or \
             .cargo/config.toml (x86-64-v2 at most; the built-in model has a fixed baseline of its own)"
        );
        std::process::exit(1);
    }
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    if let Some(beyond) = features.split(',').find(|f| f.starts_with("avx") || matches!(*f, "bmi2" | "fma" | "f16c")) {
        eprintln!("Skald is built to run on any x86-64 computer: remove `+{beyond}` from the target features");
        std::process::exit(1);
    }
    if cfg!(feature = "local-model") && std::env::var_os("SOURCE_DATE_EPOCH").is_some() {
        // ggml's CMake turns its baseline off for reproducible builds, which would leave
        // the built-in model several times slower and `COMPILED_FOR` untrue.
        eprintln!("SOURCE_DATE_EPOCH is set: ggml would drop its AVX2 baseline. Unset it to build the built-in model.");
        std::process::exit(1);
    }
}
