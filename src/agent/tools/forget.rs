//! `forget`: proposes erasing one memory, by id, for good; a write the person confirms.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::agent::memory::may_erase;
use crate::store::memories::{MemoryId, Pools};

pub struct Forget;

impl Tool for Forget {
    fn name(&self) -> &'static str {
        "forget"
    }

    fn description(&self) -> &'static str {
        "Erases one memory for good, by its id (find it with recall). Use it when the person asks \
         for something to be forgotten or a memory is wrong or out of date."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": { "id": { "type": "string", "description": "The memory's id, mem_…" } },
            "required": ["id"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let Some(id) = arguments["id"].as_str().map(MemoryId::from) else {
                return Err("forget needs \"id\", a memory's id (mem_…); recall finds them".into());
            };
            let pools = Pools { owner: &context.user, space: &context.space, system: &context.system };
            let failed = |err| format!("the memory could not be erased: {err}");
            let Some(memory) = pools.get(&id).await.map_err(failed)? else {
                return Err(format!("there is no memory {id}; nothing was erased"));
            };
            if !may_erase(&memory, &context.user, context.role.manage_instance) {
                return Err(format!(
                    "memory {id} is shared and was kept by someone else; only they or an administrator can erase it"
                ));
            }
            crate::agent::memory::erase_one(&context.system, &context.user, &context.space, &memory)
                .await
                .map_err(failed)?;
            Ok(format!("erased memory {id}"))
        })
    }
}
