//! The built web UI (`web/dist`), embedded in the binary here rather than in the library
//! (debug builds too, so what is tested is what ships); `skald::http::assets` serves it.
//!
//! Why here: cargo recompiles every crate that depends on one that changed, and the
//! library and this binary share one package, so bytes embedded in the library — or in a
//! crate of its own that the package depends on — made each web-only change recompile the
//! whole library. rustc tracks every file embedded here as an input of this binary crate
//! alone, so a web-only change now recompiles this small crate and relinks. Vite empties
//! and rewrites `web/dist` on every build, so a file added there always comes with files
//! that changed, and the embedded list is read afresh.

use rust_embed::{EmbeddedFile, RustEmbed};

#[derive(RustEmbed)]
#[folder = "web/dist"]
struct Dist;

/// One file of `web/dist`, by its path there.
pub fn file(path: &str) -> Option<EmbeddedFile> {
    Dist::get(path)
}
