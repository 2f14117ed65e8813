//! `list_agents`: the agents this one can hand a task to with `call_agent` (§8.3, §8.7),
//! as their definitions describe them. A malformed definition is left out.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};

pub struct ListAgents;

impl Tool for ListAgents {
    fn name(&self) -> &'static str {
        "list_agents"
    }

    fn description(&self) -> &'static str {
        "Lists the specialist agents you can hand a task to with call_agent: their ids, names and what each \
         is good at."
    }

    fn parameters(&self) -> Value {
        json!({ "type": "object", "properties": {}, "additionalProperties": false })
    }

    fn side_effects(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, _: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let lines: Vec<String> = context
                .agents
                .list()
                .into_iter()
                .flatten()
                .map(|agent| format!("{}: {}. {}", agent.id, agent.meta.name, agent.meta.description))
                .collect();
            Ok(if lines.is_empty() { "(no agents)".to_owned() } else { lines.join("\n") })
        })
    }
}
