//! Documents found by meaning (issue 29, docs/architecture.md §12.2) with the real
//! embedding model in the real worker: pages are cut into passages whose vectors are made
//! once a document is read, and a search ranks pages by meaning and by words together
//! (what lies near by meaning first, then what only the words found). An evaluation set of
//! our own — papers of a home, and questions asked in other words than theirs — measures
//! that ranking against meaning alone and words alone; the one the search uses by default
//! must be the best of them, and a question about nothing here must find nothing.

use reqwest::Method;
use serde_json::json;

use super::Chat;
use super::meaning::{import, start};
use crate::documents::{read, uploaded};
use crate::extract::text_pdf;

/// The documents, by name, each page's text.
const DOCUMENTS: [(&str, &[&str]); 8] = [
    (
        "lease.pdf",
        &[
            "The tenant pays a monthly rent of 850 euros, due on the first day of each month, by bank transfer to the landlord.",
            "The security deposit of 1700 euros is returned within two months after the keys are handed back, minus the cost of any repairs.",
        ],
    ),
    (
        "school.pdf",
        &[
            "The autumn term begins on 2 September. Pupils bring a packed lunch on Wednesdays, when the canteen is closed.",
            "Swimming lessons take place at the municipal pool every Friday morning; towels and caps are required.",
        ],
    ),
    (
        "washer.pdf",
        &[
            "To clean the filter, open the small flap at the bottom front, unscrew the cap and let the water drain into a shallow tray.",
            "Error code E21 means the drum could not empty: check that the drain hose is not kinked or blocked.",
        ],
    ),
    (
        "insurance.pdf",
        &[
            "Home insurance policy HX-4471 covers fire, water damage and theft of contents up to 30000 euros.",
            "To report a claim, call the assistance line within five working days and keep photographs of the damage.",
        ],
    ),
    (
        "receipt.txt",
        &[
            "Hardware store receipt: two litres of white paint, a roller and masking tape. Total 46.80 euros, paid by card.",
        ],
    ),
    (
        "sourdough.txt",
        &[
            "Mix flour and water, let it rest for an hour, add the starter and salt, then fold every thirty minutes for three hours.",
        ],
    ),
    (
        "vet.txt",
        &[
            "Vaccination record for Biscuit the cat: rabies booster given on 12 March, the next one is due in three years.",
        ],
    ),
    (
        "orchard.txt",
        &[
            "Prune the apple trees in late winter while they are dormant; remove crossing branches and keep an open centre.",
        ],
    ),
];

/// Questions, each with the document and page that answers it: most in other words than
/// the page's, some naming what only words find (a code, a number).
const QUESTIONS: [(&str, &str, i64); 14] = [
    ("how much do I pay for the flat every month", "lease.pdf", 1),
    ("when will I get my deposit back", "lease.pdf", 2),
    ("what food must pupils take to class midweek", "school.pdf", 1),
    ("what to pack for the pool on Friday", "school.pdf", 2),
    ("the washing machine shows E21", "washer.pdf", 2),
    ("how do I get the lint and fluff out of the washer", "washer.pdf", 1),
    ("what does my home cover protect against", "insurance.pdf", 1),
    ("a pipe burst, how do I tell the insurer", "insurance.pdf", 2),
    ("how much did the decorating supplies cost", "receipt.txt", 1),
    ("steps for baking bread with a starter", "sourdough.txt", 1),
    ("when is the cat's next jab", "vet.txt", 1),
    ("when should I cut back the fruit trees", "orchard.txt", 1),
    ("policy HX-4471", "insurance.pdf", 1),
    ("what is due on the first of the month", "lease.pdf", 1),
];

/// The mean reciprocal rank of the right page over the questions, and the share answered
/// first, ranked `by`.
async fn evaluate(chat: &Chat, ids: &std::collections::HashMap<&str, String>, by: &str) -> (f64, f64) {
    let (mut reciprocal, mut first) = (0.0, 0.0);
    for (question, name, page) in QUESTIONS {
        let path = format!("/api/documents/search?q={}&by={by}", urlencode(question));
        let (status, hits) = chat.server.call(Method::GET, &path, Some(&chat.token), None).await;
        assert_eq!(status, 200, "{hits}");
        let rank = hits
            .as_array()
            .unwrap()
            .iter()
            .take(10)
            .position(|hit| hit["document"] == ids[name].as_str() && hit["page"] == page);
        if let Some(rank) = rank {
            reciprocal += 1.0 / (rank as f64 + 1.0);
            first += f64::from(u8::from(rank == 0));
        }
    }
    let count = QUESTIONS.len() as f64;
    (reciprocal / count, first / count)
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b == b'-' { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

#[tokio::test]
async fn pages_are_found_by_meaning_and_words_together_and_that_ranks_best_on_an_evaluation_set() {
    let chat = start().await;
    import(&chat).await;
    let mut ids = std::collections::HashMap::new();
    for (name, pages) in DOCUMENTS {
        let bytes = if name.ends_with(".pdf") {
            text_pdf(&pages.iter().map(|p| p.as_bytes()).collect::<Vec<_>>())
        } else {
            pages[0].as_bytes().to_vec()
        };
        let pool = if name == "vet.txt" { "shared" } else { "private" };
        ids.insert(name, uploaded(&chat.server, &chat.token, name, pool, bytes).await);
    }
    for id in ids.values() {
        assert_eq!(read(&chat.server, &chat.token, id).await["status"], "ready");
    }

    let (words, words_first) = evaluate(&chat, &ids, "words").await;
    let (meaning, meaning_first) = evaluate(&chat, &ids, "meaning").await;
    let (fused, fused_first) = evaluate(&chat, &ids, "fused").await;
    eprintln!(
        "document search evaluation ({} questions, {} documents): mean reciprocal rank / first — \
         words {words:.3} / {:.0}%, meaning {meaning:.3} / {:.0}%, fused {fused:.3} / {:.0}%",
        QUESTIONS.len(),
        DOCUMENTS.len(),
        words_first * 100.0,
        meaning_first * 100.0,
        fused_first * 100.0
    );
    // The default ranking is meaning and words together: it must be the best of the three.
    assert!(fused >= meaning && fused >= words, "fused {fused}, meaning {meaning}, words {words}");
    assert!(fused_first >= 0.75, "the right page first for at least 75% of the questions: {fused_first}");
    // A question about nothing here finds nothing, though some page is always nearest.
    for unrelated in ["who won the football final", "what is the capital of Peru", "recipe for lemon cake"] {
        let path = format!("/api/documents/search?q={}", urlencode(unrelated));
        let (_, hits) = chat.server.call(Method::GET, &path, Some(&chat.token), None).await;
        assert_eq!(hits, json!([]), "{unrelated}");
    }
    // A rare word the model reads past is still found by its words.
    let (_, hits) = chat.server.call(Method::GET, "/api/documents/search?q=kinked", Some(&chat.token), None).await;
    assert_eq!((hits[0]["document"].as_str(), hits[0]["page"].as_i64()), (Some(ids["washer.pdf"].as_str()), Some(2)));
    assert!(hits[0]["snippet"].as_str().unwrap().contains("**kinked**"), "{hits}");

    // Without `by`, a search ranks the fused way.
    let path = format!("/api/documents/search?q={}", urlencode(QUESTIONS[1].0));
    let (_, default) = chat.server.call(Method::GET, &path, Some(&chat.token), None).await;
    let (_, by_fused) = chat.server.call(Method::GET, &format!("{path}&by=fused"), Some(&chat.token), None).await;
    assert_eq!(default, by_fused);

    // The tool the model calls ranks the same way: a paraphrase finds the page.
    chat.model.push(scripted_model::Reply::tool_calls([scripted_model::ScriptedCall::new(
        "document_search",
        json!({ "query": "when will I get my deposit back" }),
    )]));
    chat.model.push(scripted_model::Reply::text("Within two months."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "deposit?").await;
    chat.finished(&session).await;
    let requests = chat.model.requests();
    let content = requests.last().unwrap().body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    let first = content.lines().find(|line| line.starts_with("document ")).unwrap_or("");
    assert!(first.starts_with(&format!("document {} (own) \"lease.pdf\", page 2", ids["lease.pdf"])), "{content}");
}
