//! Build script: make sure the web assets exist before they are embedded, tell cargo to
//! rebuild when they or the migrations change, and run tauri-build for the desktop shell.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=web/dist");
    // sqlx::migrate! embeds the files at compile time but does not watch the folder.
    println!("cargo:rerun-if-changed=database/migrations");
    if !Path::new("web/dist/index.html").exists() {
        eprintln!(
            "web/dist is missing: build the web assets first with `npm --prefix web ci && npm --prefix web run build` (./build.sh and ./test.sh do this)"
        );
        std::process::exit(1);
    }

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
