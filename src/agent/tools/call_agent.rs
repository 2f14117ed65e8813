//! `call_agent`: hands one task to another agent, which works on it in a frame of its own
//! inside this turn and answers (§8.3). The turn loop runs the frame (`turn.rs`); this file
//! is the tool's face to the model.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};

pub struct CallAgent;

impl Tool for CallAgent {
    fn name(&self) -> &'static str {
        super::CALL_AGENT
    }

    fn description(&self) -> &'static str {
        "Hands a task to a specialist agent (see list_agents) and returns its answer. Give it everything it \
         needs in the task: it does not see this conversation. Several calls in one reply run at the same time."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "agent": { "type": "string", "description": "The agent's id, from list_agents." },
                "task": { "type": "string", "description": "What to do, with all the context it needs." }
            },
            "required": ["agent", "task"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        false // what the callee does passes the gate call by call
    }

    fn call<'a>(&'a self, _: Value, _: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async { Err("call_agent runs in the turn loop, not as a plain tool".into()) })
    }
}
