//! Documents (issue 29, docs/architecture.md §12.2) against the real server: uploads told
//! apart by their bytes and refused in words, read in the background by the helper, found
//! by their words, served back as what they are, kept in their owner's encrypted file only
//! and never seen by another member; the shared pool seen by all and deleted only by who
//! shared it or an administrator; reading cut short by a lock resumed at the next login.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::extract::{text_pdf, xlsx_of};
use crate::support::{Sandbox, Server, files_under, key_of, open_private};

const PASSWORD: &str = "correct horse battery";
const BO_PASSWORD: &str = "copper meadow whistle";
const WAIT: Duration = Duration::from_secs(30);

async fn start() -> (Server, String) {
    start_in(Sandbox::new()).await
}

async fn start_in(sandbox: Sandbox) -> (Server, String) {
    let server = Server::start_in(sandbox);
    let (status, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 201, "{setup}");
    let token = setup["token"].as_str().unwrap().to_owned();
    (server, token)
}

async fn add_bo(server: &Server, admin: &str) -> String {
    let (_, added) = server.post("/api/users", Some(admin), json!({ "name": "Bo", "role": "member" })).await;
    let enrol = json!({ "name": "Bo", "enrolment_code": added["enrolment_code"], "password": BO_PASSWORD });
    let (status, enrolled) = server.post("/api/enrol", None, enrol).await;
    assert_eq!(status, 201, "{enrolled}");
    enrolled["token"].as_str().unwrap().to_owned()
}

/// Sends `bytes` as a document named `name` into `pool`: the status and the answer.
pub(crate) async fn upload(server: &Server, token: &str, name: &str, pool: &str, bytes: Vec<u8>) -> (u16, Value) {
    let url = server.url("/api/documents");
    let response = reqwest::Client::new()
        .post(url)
        .query(&[("name", name), ("pool", pool)])
        .bearer_auth(token)
        // What the sender claims is ignored: the bytes say what the file is.
        .header("content-type", "application/pdf")
        .body(bytes)
        .send()
        .await
        .expect("upload");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

pub(crate) async fn uploaded(server: &Server, token: &str, name: &str, pool: &str, bytes: Vec<u8>) -> String {
    let (status, body) = upload(server, token, name, pool, bytes).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["status"], "reading", "{body}");
    body["id"].as_str().unwrap().to_owned()
}

/// Polls document `id` until it is no longer being read.
pub(crate) async fn read(server: &Server, token: &str, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let (status, body) = server.call(Method::GET, &format!("/api/documents/{id}"), Some(token), None).await;
        assert_eq!(status, 200, "{body}");
        if body["status"] != "reading" {
            return body;
        }
        assert!(tokio::time::Instant::now() < deadline, "still reading: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn search(server: &Server, token: &str, q: &str) -> Vec<Value> {
    let (status, body) = server.call(Method::GET, &format!("/api/documents/search?q={q}"), Some(token), None).await;
    assert_eq!(status, 200, "{body}");
    body.as_array().unwrap().clone()
}

async fn list(server: &Server, token: &str) -> Vec<Value> {
    let (status, body) = server.call(Method::GET, "/api/documents", Some(token), None).await;
    assert_eq!(status, 200, "{body}");
    body.as_array().unwrap().clone()
}

#[tokio::test]
async fn documents_are_told_by_their_bytes_read_searched_served_and_kept_in_their_owners_file() {
    let (server, ada) = start().await;

    let pantry =
        uploaded(&server, &ada, "pantry.txt", "private", b"Buy saffron and cardamom for the bread.\n".to_vec()).await;
    let menu =
        uploaded(&server, &ada, "menu.pdf", "private", text_pdf(&[b"Soup of the day", b"Caf\xe9 with quince tart"]))
            .await;
    let text = read(&server, &ada, &pantry).await;
    assert_eq!(
        (text["status"].as_str(), text["kind"].as_str(), text["pages"].as_i64()),
        (Some("ready"), Some("text"), Some(1))
    );
    assert_eq!(text["pool"], "private");
    let pdf = read(&server, &ada, &menu).await;
    assert_eq!(
        (pdf["status"].as_str(), pdf["kind"].as_str(), pdf["pages"].as_i64()),
        (Some("ready"), Some("pdf"), Some(2)),
        "{pdf}"
    );

    // The page's text, by page.
    let (status, page) =
        server.call(Method::GET, &format!("/api/documents/{menu}/text?page=2"), Some(&ada), None).await;
    assert_eq!(status, 200, "{page}");
    assert!(page["text"].as_str().unwrap().contains("Café with quince tart"), "{page}");
    assert_eq!(page["pages"], 2);
    let (status, beyond) =
        server.call(Method::GET, &format!("/api/documents/{menu}/text?page=3"), Some(&ada), None).await;
    assert_eq!((status, beyond["error"]["code"].as_str()), (404, Some("no_page")));

    // Search finds the words, marked, with the page; accents need not be typed.
    let hits = search(&server, &ada, "cafe").await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!((hits[0]["document"].as_str(), hits[0]["page"].as_i64()), (Some(menu.as_str()), Some(2)));
    assert!(hits[0]["snippet"].as_str().unwrap().contains("**Café**"), "{}", hits[0]);
    assert_eq!(search(&server, &ada, "cardamom").await[0]["document"], pantry.as_str());

    // The same bytes again are found, not kept twice.
    let (status, again) =
        upload(&server, &ada, "copy.txt", "private", b"Buy saffron and cardamom for the bread.\n".to_vec()).await;
    assert_eq!((status, again["error"]["code"].as_str()), (409, Some("duplicate_document")), "{again}");
    assert!(again["error"]["message"].as_str().unwrap().contains("pantry.txt"), "{again}");

    // Refused in words: empty, a program, an SVG, unknown bytes, too large.
    for (name, bytes, want, code) in [
        ("empty.txt", Vec::new(), 400, "empty_file"),
        ("tool.pdf", b"\x7fELF\x02\x01\x01\0\0\0".to_vec(), 415, "unsupported_type"),
        (
            "photo.png",
            b"<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>".to_vec(),
            415,
            "unsupported_type",
        ),
        ("noise.bin", vec![0, 159, 146, 150, 1, 2, 3], 415, "unsupported_type"),
        ("huge.txt", vec![b'a'; (64 << 20) + 1], 413, "too_large"),
    ] {
        let (status, body) = upload(&server, &ada, name, "private", bytes).await;
        assert_eq!((status, body["error"]["code"].as_str()), (want, Some(code)), "{name}: {body}");
        assert!(!body["error"]["message"].as_str().unwrap().is_empty());
    }
    assert_eq!(list(&server, &ada).await.len(), 2, "nothing refused was kept");

    // A PNG named like text is a PNG, served as one; HTML is served as text, never run.
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89".to_vec();
    let picture = uploaded(&server, &ada, "notes.txt", "private", png.clone()).await;
    let page = uploaded(
        &server,
        &ada,
        "letter.html",
        "private",
        b"<!doctype html><p>Dear tenant</p><script>steal()</script>".to_vec(),
    )
    .await;
    for (id, media_type, bytes) in [(&picture, "image/png", png), (&page, "text/plain; charset=utf-8", Vec::new())] {
        let response = reqwest::Client::new()
            .get(server.url(&format!("/api/documents/{id}/content")))
            .bearer_auth(&ada)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(header("content-type").as_deref(), Some(media_type));
        assert_eq!(header("x-content-type-options").as_deref(), Some("nosniff"));
        assert_eq!(header("cache-control").as_deref(), Some("no-store"));
        assert!(header("content-security-policy").unwrap().contains("default-src 'none'"));
        let body = response.bytes().await.unwrap();
        if !bytes.is_empty() {
            assert_eq!(body.as_ref(), bytes.as_slice());
        }
    }
    let letter = read(&server, &ada, &page).await;
    assert_eq!(letter["status"], "ready");
    assert_eq!(search(&server, &ada, "steal").await.len(), 0, "a script is not text of the page");
    assert_eq!(search(&server, &ada, "tenant").await.len(), 1);

    // Another member sees none of it, by list, by id or by search.
    let bo = add_bo(&server, &ada).await;
    assert!(list(&server, &bo).await.is_empty());
    for path in [
        format!("/api/documents/{menu}"),
        format!("/api/documents/{menu}/content"),
        format!("/api/documents/{menu}/text?page=1"),
    ] {
        let (status, body) = server.call(Method::GET, &path, Some(&bo), None).await;
        assert_eq!((status, body["error"]["code"].as_str()), (404, Some("no_document")), "{path}");
    }
    assert_eq!(server.call(Method::DELETE, &format!("/api/documents/{menu}"), Some(&bo), None).await.0, 404);
    assert!(search(&server, &bo, "cardamom").await.is_empty());

    // Nothing of a private document is readable in any file on disk but through its key.
    let mut files = Vec::new();
    files_under(&server.data_dir(), &[], &mut files);
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_default();
        for word in [&b"cardamom"[..], b"saffron", b"quince", b"Dear tenant"] {
            assert!(
                !bytes.windows(word.len()).any(|w| w == word),
                "{} holds {:?}",
                file.display(),
                String::from_utf8_lossy(word)
            );
        }
    }

    // Deleting takes the words out of the search at once.
    assert_eq!(server.call(Method::DELETE, &format!("/api/documents/{pantry}"), Some(&ada), None).await.0, 204);
    assert!(search(&server, &ada, "cardamom").await.is_empty());
    assert_eq!(server.call(Method::GET, &format!("/api/documents/{pantry}"), Some(&ada), None).await.0, 404);
    let (id, key, _) = key_of(&server.data_dir(), "Ada", PASSWORD).await;
    let mut file = open_private(&server.data_dir(), &id, &key).await.expect("Ada's key opens her file");
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM document_chunks WHERE document = ?")
        .bind(&pantry)
        .fetch_one(&mut file)
        .await
        .unwrap();
    assert_eq!(left, 0, "its bytes went with it");
}

#[tokio::test]
async fn the_shared_pool_is_seen_by_all_and_deleted_only_by_who_shared_or_an_administrator() {
    let (server, ada) = start().await;
    let bo = add_bo(&server, &ada).await;
    let rota = uploaded(&server, &bo, "rota.txt", "shared", b"Bins go out on Monday night.\n".to_vec()).await;
    let seen = read(&server, &ada, &rota).await;
    assert_eq!((seen["pool"].as_str(), seen["uploaded_by_name"].as_str()), (Some("shared"), Some("Bo")), "{seen}");
    let hits = search(&server, &ada, "bins").await;
    assert_eq!((hits.len(), hits[0]["pool"].as_str()), (1, Some("shared")), "{hits:?}");

    let notice = uploaded(&server, &ada, "notice.txt", "shared", b"The boiler is serviced on Friday.\n".to_vec()).await;
    read(&server, &bo, &notice).await;
    let (status, refused) = server.call(Method::DELETE, &format!("/api/documents/{notice}"), Some(&bo), None).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("not_yours")), "{refused}");
    // An administrator may delete what anyone shared.
    assert_eq!(server.call(Method::DELETE, &format!("/api/documents/{rota}"), Some(&ada), None).await.0, 204);
    assert_eq!(list(&server, &bo).await.len(), 1);
}

#[tokio::test]
async fn reading_cut_short_by_a_lock_and_a_restart_is_finished_at_the_next_login() {
    let (server, ada) = start().await;
    // Read one at a time, each by a helper of its own: most are still waiting at the lock.
    let sheets: Vec<String> = futures_util::future::join_all((0..8).map(|i| {
        let rows =
            format!(r#"<row><c t="inlineStr"><is><t>ledger {i} quarterly total</t></is></c></row>"#).repeat(2_000);
        let (server, ada) = (&server, &ada);
        async move { uploaded(server, ada, &format!("ledger{i}.xlsx"), "private", xlsx_of(&rows)).await }
    }))
    .await;
    assert_eq!(server.call(Method::POST, "/api/lock", Some(&ada), None).await.0, 204);
    let sandbox = server.stop("TERM");

    let data_dir = sandbox.data_dir();
    let (id, key, _) = key_of(&data_dir, "Ada", PASSWORD).await;
    let mut file = open_private(&data_dir, &id, &key).await.expect("Ada's key opens her file");
    let waiting: i64 = sqlx::query_scalar("SELECT count(*) FROM documents WHERE status = 'reading'")
        .fetch_one(&mut file)
        .await
        .unwrap();
    drop(file);
    assert!(waiting > 0, "the lock came after every sheet was read; nothing left to resume");

    let server = Server::start_in(sandbox);
    let (status, login) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 200, "{login}");
    let ada = login["token"].as_str().unwrap();
    for sheet in &sheets {
        assert_eq!(read(&server, ada, sheet).await["status"], "ready");
    }
    let found: std::collections::HashSet<String> = search(&server, ada, "quarterly")
        .await
        .iter()
        .map(|hit| hit["document"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(found.len(), 8, "every sheet's words are found");
}

/// A scanned page: found by its words where tesseract is installed (deps.sh installs it);
/// where it is not (a server whose PATH holds no program), the document says so and why.
#[tokio::test]
async fn a_scanned_pdf_is_found_by_its_words_with_ocr_and_says_ocr_is_missing_without() {
    let pdf = crate::extract::scanned_pdf(&crate::extract::scan_of("Invoice total 42 euros"));

    let (server, ada) = start().await;
    let id = uploaded(&server, &ada, "scan.pdf", "private", pdf.clone()).await;
    let read_with = read(&server, &ada, &id).await;
    assert_eq!(read_with["status"], "ready", "{read_with}");
    let hits = search(&server, &ada, "invoice").await;
    assert_eq!((hits[0]["document"].as_str(), hits[0]["page"].as_i64()), (Some(id.as_str()), Some(1)), "{hits:?}");

    let nothing = tempfile::tempdir().unwrap();
    let mut sandbox = Sandbox::new();
    sandbox.env.push(("PATH".to_owned(), nothing.path().to_str().unwrap().to_owned()));
    let (server, ada) = start_in(sandbox).await;
    let id = uploaded(&server, &ada, "scan.pdf", "private", pdf).await;
    let read_without = read(&server, &ada, &id).await;
    assert_eq!(read_without["status"], "no_text", "{read_without}");
    let why = read_without["status_detail"].as_str().unwrap();
    assert!(why.contains("OCR (tesseract) is not installed"), "{why}");
}
