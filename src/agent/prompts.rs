//! A tool server's prompts and resources (MCP, §12.1), for a person's message: listed by
//! their own instances of the servers they are offered, as they accepted them (§3). A
//! prompt is filled in as text the person reads, edits and sends themselves; a resource
//! is attached to a message they send, as outside content (§8.4) — the conversation is
//! marked so, as after a fetched page. Nothing of either reaches a model until they send.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{Runtime, TurnError};
use crate::ids::{ConversationId, McpServerId};
use crate::mcp::{PromptView, ResourceView};
use crate::users::sessions::Session;

impl Runtime {
    /// The servers whose prompts a person is offered: approved ones their role, as they
    /// accepted it, is offered, and none they declined or that waits for their decision.
    async fn prompt_servers(&self, session: &Session) -> Result<BTreeSet<String>, TurnError> {
        let Some(hub) = self.mcp() else { return Ok(BTreeSet::new()) };
        let mut role = self.role_of(&session.user_id).await?;
        // Most homes have no tool server: then there is nothing to compare or record.
        if hub.terms(&role).await?.is_empty() {
            return Ok(BTreeSet::new());
        }
        let standing = self.standing(session, &role, None).await?;
        standing.withheld.narrow_role(&mut role);
        // The servers as the standing compared them, not read again.
        let offered = standing.catalogue.as_ref().map(|catalogue| catalogue.terms(&role)).unwrap_or_default();
        Ok(offered.into_keys().filter(|id| !standing.withheld.mcp.contains(id)).collect())
    }

    /// The prompts of the tool servers the person is offered.
    pub async fn tool_prompts(&self, session: &Session) -> Result<Vec<PromptView>, TurnError> {
        let Some(hub) = self.mcp() else { return Ok(Vec::new()) };
        let servers = self.prompt_servers(session).await?;
        Ok(hub.prompts(&session.user_id, &session.space, &servers).await?)
    }

    /// The resources of the tool servers the person is offered.
    pub async fn tool_resources(&self, session: &Session) -> Result<Vec<ResourceView>, TurnError> {
        let Some(hub) = self.mcp() else { return Ok(Vec::new()) };
        let servers = self.prompt_servers(session).await?;
        Ok(hub.resources(&session.user_id, &session.space, &servers).await?)
    }

    /// The resources a person attaches to a message in `chat`, each read by their own
    /// instance and wrapped as outside content, as the text that follows their words; the
    /// conversation is marked as holding outside content first. The inner error says why
    /// one could not be attached (nothing is marked then).
    pub async fn attach(
        &self,
        session: &Session,
        chat: &ConversationId,
        resources: &[(McpServerId, String)],
    ) -> Result<Result<String, PromptRefused>, TurnError> {
        let Some(hub) = self.mcp() else { return Ok(Err(PromptRefused::NotYours)) };
        let servers = self.prompt_servers(session).await?;
        let mut blocks = Vec::with_capacity(resources.len());
        for (server, uri) in resources {
            if !servers.contains(server.as_str()) {
                return Ok(Err(PromptRefused::NotYours));
            }
            match hub.read_resource(&session.user_id, &session.space, &servers, server, uri).await {
                Ok(block) => blocks.push(block),
                Err(why) => return Ok(Err(PromptRefused::Server(why))),
            }
        }
        crate::store::chat::mark_outside_content(&session.space, chat).await?;
        Ok(Ok(blocks.join("\n\n")))
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
