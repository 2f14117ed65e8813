//! Serving the web UI, embedded in the binary (debug builds too, so what is tested is what
//! ships). Served without a token: the assets hold no secrets, and the page asks for the
//! token. The files themselves are embedded by the binary (`src-tauri/web.rs`) and
//! handed in as [`WebFiles`].

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use rust_embed::EmbeddedFile;

use super::AppState;
use super::error::ApiError;

/// Looks up one file of the built web UI by its path under `web/dist`. The binary embeds
/// the files and passes this in ([`crate::app::StartOptions`]), so that a web-only change
/// recompiles the binary's small crate and not this library (`src-tauri/web.rs` says why).
pub type WebFiles = fn(&str) -> Option<EmbeddedFile>;

/// Everything the route table does not name: unknown `/api` paths get a JSON 404,
/// other GETs get a file or, for client-side routes, `index.html`.
pub async fn fallback(State(state): State<AppState>, method: Method, uri: Uri) -> Response {
    let path = uri.path();
    if path == "/api" || path.starts_with("/api/") {
        return ApiError::NotFound.into_response();
    }
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let wanted = path.trim_start_matches('/');
    if let Some(response) = file(state.web, wanted) {
        return response;
    }
    // A path with an extension names a file that is not there; anything else is a
    // client-side route the page resolves itself.
    let last = wanted.rsplit('/').next().unwrap_or("");
    if last.contains('.') {
        return StatusCode::NOT_FOUND.into_response();
    }
    file(state.web, "index.html").unwrap_or_else(|| StatusCode::NOT_FOUND.into_response())
}

fn file(web: WebFiles, path: &str) -> Option<Response> {
    let path = if path.is_empty() { "index.html" } else { path };
    let (data, mime) = match dev_dir() {
        Some(dir) => from_dir(&dir, path)?,
        None => {
            let asset = web(path)?;
            (asset.data.into_owned(), asset.metadata.mimetype().to_owned())
        }
    };
    let mime = HeaderValue::from_str(&mime).unwrap_or(HeaderValue::from_static("application/octet-stream"));
    // Bundled files carry a content hash in their names; the page itself must be fresh.
    let cache = if path.starts_with("assets/") {
        HeaderValue::from_static("public, max-age=31536000, immutable")
    } else {
        HeaderValue::from_static("no-cache")
    };
    let mut response = Response::new(Body::from(data));
    response.headers_mut().insert(header::CONTENT_TYPE, mime);
    response.headers_mut().insert(header::CACHE_CONTROL, cache);
    Some(response)
}

/// `SKALD_DEV_WEB_DIR`, honoured by debug builds only: serve the web UI from that folder
/// instead of the embedded copy, so the page can be rebuilt without rebuilding Skald.
fn dev_dir() -> Option<std::path::PathBuf> {
    if !cfg!(debug_assertions) {
        return None;
    }
    std::env::var_os("SKALD_DEV_WEB_DIR").map(std::path::PathBuf::from)
}

/// A file of the development folder, refusing any path that climbs out of it.
fn from_dir(dir: &std::path::Path, path: &str) -> Option<(Vec<u8>, String)> {
    if path.split('/').any(|part| part == ".." || part.is_empty()) || path.contains('\\') {
        return None;
    }
    let data = std::fs::read(dir.join(path)).ok()?;
    let mime = match path.rsplit('.').next() {
        Some("html") => "text/html",
        Some("js") => "text/javascript",
        Some("css") => "text/css",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    };
    Some((data, mime.to_owned()))
}
