//! A tool server's prompts (MCP, §12.1) as templates for a person's message: listed by
//! their own instances of the servers they are offered, as they accepted them (§3), and
//! filled in as text the person reads, edits and sends themselves. Nothing of it reaches
//! a model until they do.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{Runtime, TurnError};
use crate::ids::McpServerId;
use crate::mcp::PromptView;
use crate::users::sessions::Session;

impl Runtime {
    /// The servers whose prompts a person is offered: approved ones their role, as they
    /// accepted it, is offered, and none they declined or that waits for their decision.
    async fn prompt_servers(&self, session: &Session) -> Result<BTreeSet<String>, TurnError> {
        let Some(hub) = self.mcp() else { return Ok(BTreeSet::new()) };
        let mut role = self.role_of(&session.user_id).await?;
        let standing = self.standing(session, &role, None).await?;
        standing.withheld.narrow_role(&mut role);
        let offered = hub.terms(&role).await?;
        Ok(offered.into_keys().filter(|id| !standing.withheld.mcp.contains(id)).collect())
    }

    /// The prompts of the tool servers the person is offered.
    pub async fn tool_prompts(&self, session: &Session) -> Result<Vec<PromptView>, TurnError> {
        let Some(hub) = self.mcp() else { return Ok(Vec::new()) };
        let servers = self.prompt_servers(session).await?;
        Ok(hub.prompts(&session.user_id, &session.space, &servers).await?)
    }

    /// One of those prompts filled with `arguments`, as text; the inner error says why
    /// there is none.
    pub async fn tool_prompt(
        &self,
        session: &Session,
        server: &McpServerId,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Result<String, PromptRefused>, TurnError> {
        let Some(hub) = self.mcp() else { return Ok(Err(PromptRefused::NotYours)) };
        let servers = self.prompt_servers(session).await?;
        if !servers.contains(server.as_str()) {
            return Ok(Err(PromptRefused::NotYours));
        }
        let text = hub.prompt_text(&session.user_id, &session.space, &servers, server, name, arguments).await;
        Ok(text.map_err(PromptRefused::Server))
    }
}

/// Why a prompt was not given.
#[derive(Debug)]
pub enum PromptRefused {
    /// The server is not among those the person is offered (or accepted).
    NotYours,
    /// The server did not give it: why, in its words or Skald's.
    Server(String),
}
