//! Model servers already running on this computer (§9): Ollama, LM Studio and llama.cpp's
//! server on their usual ports, offered first when someone connects a model. Only
//! loopback is probed; a server counts when it lists its models in its protocol.

use std::time::Duration;

use serde::Serialize;

use super::Endpoint;
use crate::store::providers::{Model, ProviderKind};

/// A place a local model server usually listens.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub label: &'static str,
    pub kind: ProviderKind,
    pub base_url: String,
}

/// A server that answered.
#[derive(Debug, Serialize, ts_rs::TS)]
#[ts(rename = "DetectedServer")]
pub struct Found {
    pub label: &'static str,
    pub kind: ProviderKind,
    pub base_url: String,
    pub models: Vec<Model>,
}

/// How long one probe may take: a local server answers its model list at once.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The usual ports. A debug build takes others from `SKALD_TEST_DETECT_PORTS`
/// (`ollama=N,lmstudio=N,llamacpp=N`), so tests can run stand-ins on free ports.
pub fn candidates() -> Vec<Candidate> {
    let mut ports = [("ollama", 11434), ("lmstudio", 1234), ("llamacpp", 8080)];
    if cfg!(debug_assertions)
        && let Ok(spec) = std::env::var("SKALD_TEST_DETECT_PORTS")
    {
        for (name, port) in spec.split(',').filter_map(|pair| pair.split_once('=')) {
            if let (Some(slot), Ok(port)) = (ports.iter_mut().find(|(n, _)| *n == name), port.parse()) {
                slot.1 = port;
            }
        }
    }
    let [ollama, lmstudio, llamacpp] = ports.map(|(_, port)| port);
    vec![
        Candidate { label: "Ollama", kind: ProviderKind::Ollama, base_url: format!("http://127.0.0.1:{ollama}") },
        Candidate {
            label: "LM Studio",
            kind: ProviderKind::Openai,
            base_url: format!("http://127.0.0.1:{lmstudio}/v1"),
        },
        Candidate {
            label: "llama.cpp",
            kind: ProviderKind::Openai,
            base_url: format!("http://127.0.0.1:{llamacpp}/v1"),
        },
    ]
}

/// Probes every candidate at once; returns those that listed models, in candidate order.
pub async fn probe(client: &reqwest::Client, candidates: Vec<Candidate>) -> Vec<Found> {
    let probes = candidates.into_iter().map(|candidate| async move {
        let endpoint = Endpoint {
            provider: candidate.label.to_owned(),
            kind: candidate.kind,
            privacy: super::privacy::Tier::Local,
            base_url: candidate.base_url.clone(),
            api_key: None,
            local: None,
        };
        let listed = tokio::time::timeout(PROBE_TIMEOUT, super::list_models(client, &endpoint)).await;
        match listed {
            Ok(Ok(models)) if !models.is_empty() => {
                Some(Found { label: candidate.label, kind: candidate.kind, base_url: candidate.base_url, models })
            }
            _ => None,
        }
    });
    futures_util::future::join_all(probes).await.into_iter().flatten().collect()
}
