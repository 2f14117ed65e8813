//! Imports run one way (docs/architecture.md §0.2): base modules → `rules` → `store` →
//! `secrets` → `providers`, `users` and the other readers of the store → `mcp` → `agent` → `http` →
//! `app` → the shell in `src-tauri/`. `fuzzing` (compiled only for the fuzzer) sits with `app`, on top,
//! since it reaches into each layer's parsers. A module may name `crate::X` only for an `X` in a lower layer or
//! in its own module; so there is no circle between the top-level modules either.

use std::path::Path;

/// Each top-level module of `src/` by layer, lowest first.
const LAYERS: [&[&str]; 10] = [
    &["ids", "crypto", "config", "error", "logging", "patterns", "reach", "supervise", "notify", "untrusted", "half"],
    &["rules", "extract", "voice"],
    &["store"],
    &["secrets"],
    &["providers", "users", "export", "verify"],
    &["mcp", "backup"],
    &["agent"],
    &["jobs"],
    &["http"],
    &["app", "fuzzing", "benching"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// The top-level module a file under `src/` belongs to: `src/agent/turn.rs` → `agent`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("a file under src/");
    let first = rel.components().next().expect("a path").as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_owned()
}

/// Every `crate::name` a file's code (before its tests) names, with the line it is on.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut found = Vec::new();
    for (number, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                found.push((number + 1, name));
            }
            rest = after;
        }
    }
    found
}

/// The upward or sideways imports in `src/`, as `file:line: from → to`.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    crate::support::files_under(src, &[], &mut files);
    files.retain(|path| path.extension().is_some_and(|e| e == "rs"));
    assert!(!files.is_empty(), "the scan sees the sources in {}", src.display());
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let from = module_of(src, &file);
        if from == "lib" {
            continue;
        }
        let Some(own) = layer_of(&from) else {
            found.push(format!("{}: the module {from} has no layer in tests/it/layers.rs", file.display()));
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        for (line, to) in crate_paths(&text) {
            if to == from || to == "VERSION" {
                continue;
            }
            match layer_of(&to) {
                Some(layer) if layer < own => {}
                _ => found.push(format!("{}:{line}: {from} → {to}", file.display())),
            }
        }
    }
    found
}

#[test]
fn every_import_runs_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&src);
    assert!(found.is_empty(), "imports that run up or sideways:\n{}", found.join("\n"));
}

#[test]
fn the_check_finds_an_import_that_runs_up() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("bad.rs"), "use crate::agent::gate::Rule;\n// crate::http in a comment\n").unwrap();
    std::fs::write(dir.path().join("ids.rs"), "use crate::crypto::Dek;\n").unwrap();
    let found = violations(dir.path());
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].ends_with("ids.rs:1: ids → crypto"), "same layer, sideways: {found:?}");
    assert!(found[1].ends_with("bad.rs:1: store → agent"), "{found:?}");
}
