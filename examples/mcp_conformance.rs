//! The client the MCP conformance suite (`@modelcontextprotocol/conformance`) drives:
//! Skald's own connection code (`skald::mcp::connection`) against the suite's scenario
//! server at the address it appends. It makes the handshake, lists the tools and calls
//! each with arguments made from its input schema; a form the server asks for is
//! accepted with nothing typed, so what is sent is the schema's defaults, filled in the
//! way a person's form is (`skald::agent::forms::filled`, SEP-1034); a request for a
//! model's answer is refused, as there is no model. Exits non-zero when
//! the handshake or listing fails; what each call returned goes to stderr.
//!
//!   mcp_conformance <server url>        (run by tests/mcp/conformance.sh)

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use skald::mcp::connection::{Asker, Connection, Launch, Question, Reply};
use skald::mcp::sampling::{SampleRequest, Sampled};

/// Accepts every form with its defaults.
struct Defaults;

impl Asker for Defaults {
    fn owner(&self) -> &str {
        "conformance"
    }

    fn ask(&self, question: Question) -> BoxFuture<'static, Reply> {
        let reply = match skald::agent::forms::filled(&question.schema, json!({})) {
            Ok(content) => Reply::Accept(content),
            Err(_) => Reply::Decline,
        };
        Box::pin(async move { reply })
    }

    fn progress(&self, _progress: f64, _total: Option<f64>, _message: Option<String>) {}

    /// No model stands behind this client: a request for a model's answer is refused.
    fn sample(&self, _request: SampleRequest) -> BoxFuture<'static, Result<Sampled, String>> {
        Box::pin(async { Err("the conformance client has no model to answer with".to_owned()) })
    }
}

/// Arguments that fit a schema: each property its default, or a plain value of its type.
fn sample(schema: &Value) -> Map<String, Value> {
    let properties = schema["properties"].as_object().cloned().unwrap_or_default();
    properties
        .into_iter()
        .map(|(name, field)| {
            let value = field.get("default").cloned().unwrap_or_else(|| match field["type"].as_str() {
                Some("number" | "integer") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => Value::Object(sample(&field)),
                _ => field["enum"].get(0).cloned().unwrap_or(json!("test")),
            });
            (name, value)
        })
        .collect()
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: mcp_conformance <server url>");
        return ExitCode::from(2);
    };
    let client = reqwest013::Client::builder().no_proxy().build().expect("an HTTP client");
    let launch = Launch::Http { url, token: None, client };
    let connection = match Connection::open(launch, "2025-11-25", Duration::from_secs(20), Vec::new()).await {
        Ok(connection) => connection,
        Err(err) => {
            eprintln!("mcp_conformance: {err}");
            return ExitCode::FAILURE;
        }
    };
    let tools = connection.listing.tools.read().await.clone();
    for tool in tools {
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        let outcome = connection.call(&tool.name, sample(&schema), Some(Arc::new(Defaults))).await;
        eprintln!("mcp_conformance: {}: {:?}", tool.name, outcome.map(|r| r.content));
    }
    connection.close().await;
    ExitCode::SUCCESS
}
