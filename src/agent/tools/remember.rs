//! `remember`: keeps one durable sentence as a memory, once the person has allowed it on
//! its card (always: the gate's `CONFIRMED_WRITES`). The author is recorded as the model,
//! with the agent and the conversation; a model cannot claim a person wrote it.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::agent::memory::{self, REMEMBER};
use crate::store::memories::{Author, MAX_CHARS, Pools};

pub struct Remember;

impl Tool for Remember {
    fn name(&self) -> &'static str {
        REMEMBER
    }

    fn description(&self) -> &'static str {
        "Proposes keeping one durable fact for later conversations; the person sees it and decides. \
         Use it for what will not be in the records next time: a standing preference, a constraint \
         someone stated, a decision and its reason. Never for what a tool can look up again, figures \
         that change, or a restatement of what you just said. Write one sentence as it should read \
         months from now, naming people (\"Ada is allergic to peanuts\"). pool \"private\" is read \
         only by this person; \"shared\" by everyone here and the administrator. subject says whom \
         it is about: {\"kind\": \"self\"} (this person), {\"kind\": \"member\", \"id\": \"<user id>\"} \
         (another person here) or {\"kind\": \"instance\"} (how this home runs)."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": { "type": "string", "maxLength": MAX_CHARS, "description": "One sentence." },
                "pool": { "type": "string", "enum": ["private", "shared"] },
                "subject": {
                    "type": "object",
                    "properties": {
                        "kind": { "type": "string", "enum": ["self", "member", "instance"] },
                        "id": { "type": "string", "description": "The member's user id, for kind member." }
                    },
                    "required": ["kind"],
                    "additionalProperties": false
                }
            },
            "required": ["text", "pool", "subject"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let failed = |err: crate::store::StoreError| format!("the memory could not be kept: {err}");
            let checked =
                memory::check(&context.system, &context.user, &context.role, &arguments).await.map_err(failed)??;
            let pools = Pools { owner: &context.user, space: &context.space, system: &context.system };
            let author = Author::Model { agent: context.agent.clone() };
            let source = Some((&context.chat_id, context.outside_content));
            let kept = checked
                .keep(&pools, &author, source, Some(context.role.memory_retention_days))
                .await
                .map_err(failed)?;
            let until = kept.expires_at.as_deref().and_then(|at| at.get(..10)).unwrap_or("until removed");
            Ok(format!("remembered {}: {:?} (kept until {until})", kept.id, kept.text))
        })
    }
}
