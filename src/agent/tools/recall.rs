//! `recall`: searches the memories the person may read (their private pool and the shared
//! one); read-only.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::agent::meaning::MemoryCorpus;
use crate::store::memories::Pools;

pub struct Recall;

/// The most memories one call returns.
const MOST: usize = 10;

impl Tool for Recall {
    fn name(&self) -> &'static str {
        "recall"
    }

    fn description(&self) -> &'static str {
        "Searches what is remembered about this person, the people here and this home (their \
         private memories and the shared ones) for what the query is about, best match first. \
         Each result has its id (for forget) and its pool; the sentence names whom it is about."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "What to look for, in a few words." },
                "limit": { "type": "integer", "minimum": 1, "maximum": MOST }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let Some(query) = arguments["query"].as_str().filter(|q| !q.trim().is_empty()) else {
                return Err("recall needs \"query\", a few words to look for".into());
            };
            let limit = arguments["limit"].as_u64().map_or(5, |l| usize::try_from(l).unwrap_or(MOST).clamp(1, MOST));
            let pools = Pools { owner: &context.user, space: &context.space, system: &context.system };
            let (mut found, by) = context
                .meaning
                .search(&MemoryCorpus { pools: &pools, only: None }, query, limit * 2)
                .await
                .map_err(|err| format!("recall failed: {err}"))?;
            // Kept on this machine: never into a context a remote provider may read (§16).
            found.retain(|m| crate::agent::memory::relevant(by, m) && !(context.remote && m.local_only));
            found.truncate(limit);
            if found.iter().any(|m| crate::agent::memory::outside_for(m, &context.user)) {
                context.mark_outside();
            }
            if found.is_empty() {
                return Ok(format!("nothing remembered matches {query:?}"));
            }
            Ok(crate::agent::memory::recall_lines(&found))
        })
    }
}
