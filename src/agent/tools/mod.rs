//! The tool registry (§12): one file per built-in tool, each with its JSON schema. A turn
//! offers the model the tools its role and its agent both allow; a call runs here and
//! comes back as text for the model plus a status for the record.

mod call_agent;
pub mod clarify;
mod current_time;
mod document_read;
mod document_search;
mod forget;
mod image_generate;
mod list_agents;
mod note_delete;
mod note_list;
mod note_read;
mod note_search;
mod note_write;
mod notify;
mod recall;
mod remember;
mod schedule;
mod scratchpad;
pub mod web_fetch;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::ids::ConversationId;
use crate::providers::ToolSpec;
use crate::providers::catalogue::allowed;

/// The tool that opens a sub-agent frame; the turn loop runs it.
pub const CALL_AGENT: &str = "call_agent";

/// The tools of memory (§10), offered only while the person has memory on.
pub const MEMORY_TOOLS: [&str; 3] = ["remember", "recall", "forget"];

/// The tool that asks the person a question; the turn loop parks on it.
pub const CLARIFY: &str = "clarify";

/// What a tool call produced. An error is text the model reads and can act on.
pub type ToolResult = Result<String, String>;

/// Where a call runs: whose turn, in which conversation, with what it may reach.
pub struct ToolContext {
    pub user: crate::ids::UserId,
    pub chat_id: ConversationId,
    /// The person's open encrypted file.
    pub space: crate::store::private::PrivateStore,
    pub notifier: crate::notify::Notifier,
    pub events: super::events::Events,
    pub agents: super::definition::AgentDir,
    /// The shared database: the shared memory pool, the people a memory may be about.
    pub system: crate::store::system::SystemStore,
    /// Recall by meaning, with the embedding model when one is here.
    pub meaning: super::meaning::Meaning,
    /// The person's role as the turn read it (memory retention, privacy tier).
    pub role: crate::store::roles::Role,
    /// The agent making the call: a memory it writes names it as the author.
    pub agent: String,
    /// What the call returns may reach a remote provider (the turn's model or its
    /// fallback is remote): memories marked local_only are then never returned.
    pub remote: bool,
    /// Outside content had entered the conversation when the call was decided.
    pub outside_content: bool,
    /// Set by a tool that brought outside content in without being an outside tool itself
    /// (a note written from a fetched page): the conversation is marked after the call.
    pub brought_outside: std::sync::atomic::AtomicBool,
    pub turn_id: crate::ids::TurnId,
    /// The turn's events: a tool server's progress shows on its call.
    pub turn_events: super::events::TurnEvents,
    /// Where a tool server's forms wait on the person.
    pub forms: super::forms::Forms,
    /// What answers a tool server's request for a model's answer, once the person allows it.
    pub sampler: Arc<super::turn::sample::Sampler>,
    /// The person's session, for the services above the agent (`scheduling`).
    pub session: Arc<crate::users::sessions::Session>,
    /// The jobs service, for the scheduling tools.
    pub scheduling: super::scheduling::SchedulingPort,
    /// The runtime, for a tool that reaches a provider itself (`image_generate`).
    pub runtime: super::Runtime,
}

impl ToolContext {
    /// Notes that what the call returned carries outside content.
    pub fn mark_outside(&self) {
        self.brought_outside.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// One built-in tool.
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// The JSON schema of the arguments.
    fn parameters(&self) -> Value;
    /// Whether a call changes or reaches something outside the conversation (writes a
    /// note, shows a notification, fetches a page). Once outside content has entered a
    /// conversation, a person's own "always allow" no longer covers such tools (§8.4).
    fn side_effects(&self) -> bool;
    /// Whether what it returns comes from outside Skald (a web page, later an MCP server):
    /// the conversation is then marked as holding outside content.
    fn brings_outside_content(&self) -> bool {
        false
    }
    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult>;
}

/// Every tool Skald has — its own, and the approved tools of MCP servers; cheap to clone.
#[derive(Clone)]
pub struct Registry {
    tools: Arc<Vec<Box<dyn Tool>>>,
    mcp: Option<crate::mcp::Hub>,
}

impl Registry {
    /// The built-in tools; `fetch` bounds what `web_fetch` may reach.
    pub fn builtin(fetch: web_fetch::FetchPolicy) -> Self {
        Self {
            tools: Arc::new(vec![
                Box::new(current_time::CurrentTime),
                Box::new(scratchpad::Scratchpad),
                Box::new(notify::Notify),
                Box::new(note_write::NoteWrite),
                Box::new(note_read::NoteRead),
                Box::new(note_list::NoteList),
                Box::new(note_search::NoteSearch),
                Box::new(note_delete::NoteDelete),
                Box::new(web_fetch::WebFetch::new(fetch)),
                Box::new(list_agents::ListAgents),
                Box::new(call_agent::CallAgent),
                Box::new(clarify::Clarify),
                Box::new(remember::Remember),
                Box::new(recall::Recall),
                Box::new(forget::Forget),
                Box::new(schedule::Schedule),
                Box::new(schedule::ListSchedules),
                Box::new(schedule::CancelSchedule),
                Box::new(document_search::DocumentSearch),
                Box::new(document_read::DocumentRead),
                Box::new(image_generate::ImageGenerate),
            ]),
            mcp: None,
        }
    }

    /// The same, with the MCP servers' tools.
    pub fn with_mcp(self, hub: crate::mcp::Hub) -> Self {
        Self { mcp: Some(hub), ..self }
    }

    /// The MCP connections, where there are any.
    pub fn mcp(&self) -> Option<&crate::mcp::Hub> {
        self.mcp.as_ref()
    }

    /// What a turn offers: the built-in tools both pattern lists allow, then the approved
    /// MCP tools they allow — of servers the person has not declined (`withheld`), and only
    /// servers that keep words here for a `local_only` role. The MCP tools come from the
    /// `catalogue` the person's standing was checked against ([`Standing::catalogue`]).
    ///
    /// [`Standing::catalogue`]: crate::agent::standing::Standing::catalogue
    pub fn offered_with_mcp(
        &self,
        role: &crate::store::roles::Role,
        agent_patterns: &[String],
        withheld: &std::collections::BTreeSet<String>,
        catalogue: Option<&crate::mcp::Catalogue>,
    ) -> Vec<ToolSpec> {
        let mut offered = self.offered(&role.tools, agent_patterns);
        // Scheduling needs a role that may schedule, whatever its patterns say.
        if !role.may_schedule {
            offered.retain(|t| !super::scheduling::SCHEDULING_TOOLS.contains(&t.name.as_str()));
        }
        if let Some(catalogue) = catalogue {
            let local_only = role.privacy_tier == crate::store::roles::PrivacyTier::LocalOnly;
            offered.extend(catalogue.offered(&role.tools, agent_patterns, local_only, withheld));
        }
        offered
    }

    /// Whether an offered tool's server marks it destructive (the gate is then stricter).
    pub async fn destructive(&self, offered: &[ToolSpec], name: &str) -> bool {
        match &self.mcp {
            Some(hub) if crate::mcp::pin::is_mcp(name) && offered.iter().any(|t| t.name == name) => {
                hub.destructive(name).await
            }
            _ => false,
        }
    }

    /// The tools both pattern lists allow, as offered to the model, in a stable order.
    pub fn offered(&self, role_patterns: &[String], agent_patterns: &[String]) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .filter(|t| allowed(role_patterns, t.name()) && allowed(agent_patterns, t.name()))
            .map(|t| ToolSpec {
                name: t.name().into(),
                description: t.description().into(),
                parameters: t.parameters(),
            })
            .collect()
    }

    /// Runs a call the model made. Only offered tools run; the arguments must be a JSON
    /// object (empty text counts as `{}`).
    pub async fn call(
        &self,
        offered: &[ToolSpec],
        call: &crate::providers::ToolCall,
        context: &ToolContext,
    ) -> ToolResult {
        let (name, arguments) = (call.name.as_str(), call.arguments.as_str());
        if let Some(hub) = self.offered_mcp(offered, name) {
            let arguments = parse_arguments(arguments)?;
            let person = crate::store::users::find(&context.system, &context.user).await.ok().flatten();
            let asker = super::forms::FormCall {
                forms: context.forms.clone(),
                events: context.events.clone(),
                turn_events: context.turn_events.clone(),
                user: context.user.clone(),
                person: person.map(|row| super::inbox::CardFor { id: row.id, name: row.name }),
                session: context.chat_id.clone(),
                turn: context.turn_id.clone(),
                call: crate::ids::CallId::new(call.id.clone()),
                tool: name.to_owned(),
                may_approve: context.role.may_approve,
                sampler: context.sampler.clone(),
            };
            return hub.call(&context.user, &context.space, name, arguments, std::sync::Arc::new(asker)).await;
        }
        let tool = self.find(offered, name)?;
        let arguments = parse_arguments(arguments)?;
        known_fields_only(&tool.parameters(), &arguments, "")?;
        tool.call(arguments, context).await
    }

    /// Whether an offered tool has side effects; none for a tool not offered here.
    /// An MCP tool's annotations never count here: a server's `readOnlyHint` could be a lie,
    /// so every MCP tool counts as one with side effects.
    pub fn side_effects(&self, offered: &[ToolSpec], name: &str) -> Option<bool> {
        if self.offered_mcp(offered, name).is_some() {
            return Some(true);
        }
        self.find(offered, name).ok().map(Tool::side_effects)
    }

    /// Whether a tool's results come from outside Skald: a web page, an MCP server.
    pub fn brings_outside_content(&self, name: &str) -> bool {
        crate::mcp::pin::is_mcp(name) || self.tools.iter().any(|t| t.name() == name && t.brings_outside_content())
    }

    /// The hub that runs `name`, when it is an offered MCP tool.
    fn offered_mcp(&self, offered: &[ToolSpec], name: &str) -> Option<&crate::mcp::Hub> {
        self.mcp.as_ref().filter(|_| crate::mcp::pin::is_mcp(name) && offered.iter().any(|t| t.name == name))
    }

    fn find(&self, offered: &[ToolSpec], name: &str) -> Result<&dyn Tool, String> {
        self.tools
            .iter()
            .find(|t| t.name() == name && offered.iter().any(|o| o.name == name))
            .map(AsRef::as_ref)
            .ok_or_else(|| not_offered(name))
    }
}

/// Why a call to a tool not offered did not run, in words the model can pass on.
fn not_offered(name: &str) -> String {
    if crate::mcp::pin::is_mcp(name) {
        format!(
            "there is no tool named {name:?} available here: a tool server's tools are offered only as an \
             administrator approved them, so one that changed since, or that this person's role or agent does not \
             include, does not run. Tell the person; do not retry."
        )
    } else {
        format!("there is no tool named {name:?} available here")
    }
}

/// Refuses a field a schema does not name where it says `additionalProperties: false`,
/// at any depth: every built-in tool's schema does, so a decoy field that only a rule
/// might read never reaches a tool.
fn known_fields_only(schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let (Some(fields), Some(properties)) = (value.as_object(), schema["properties"].as_object()) else {
        return Ok(());
    };
    for (name, inner) in fields {
        match properties.get(name) {
            Some(inner_schema) => known_fields_only(inner_schema, inner, &format!("{at}/{name}"))?,
            None if schema["additionalProperties"] == false => {
                let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                return Err(format!(
                    "the arguments have a field this tool does not take: {at}/{name}; it takes only {}",
                    if known.is_empty() { "no arguments".to_owned() } else { known.join(", ") }
                ));
            }
            None => {}
        }
    }
    Ok(())
}

/// The words a search tool named `tool` is to look for (its `query`, at most `most`
/// characters), or why these arguments hold none it can use, in words the model can act on.
pub(super) fn search_words<'a>(arguments: &'a Value, tool: &str, most: usize) -> Result<&'a str, String> {
    let query = arguments["query"].as_str().unwrap_or("");
    if query.trim().is_empty() {
        return Err(format!("{tool} needs \"query\", some words to look for"));
    }
    if query.chars().count() > most {
        return Err(format!("a {tool} query is at most {most} characters: use a few distinctive words"));
    }
    Ok(query)
}

/// A call's arguments as the JSON object every tool takes; empty text counts as `{}`.
pub fn parse_arguments(arguments: &str) -> Result<Value, String> {
    let arguments = if arguments.trim().is_empty() { "{}" } else { arguments };
    let value: Value =
        serde_json::from_str(arguments).map_err(|err| format!("the arguments are not valid JSON: {err}"))?;
    if !value.is_object() {
        return Err("the arguments must be a JSON object".into());
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<String> {
        vec!["*".into()]
    }

    #[test]
    fn a_tool_is_offered_only_where_role_and_agent_both_allow_it() {
        let registry = Registry::builtin(web_fetch::FetchPolicy::default());
        assert_eq!(registry.offered(&all(), &all()).len(), 21);
        assert!(registry.offered(&all(), &[]).is_empty());
        let notes: Vec<String> = registry.offered(&["note_*".into()], &all()).into_iter().map(|t| t.name).collect();
        assert_eq!(notes, ["note_write", "note_read", "note_list", "note_search", "note_delete"]);
        assert!(registry.offered(&["note_*".into()], &["web_*".into()]).is_empty());
        assert_eq!(registry.offered(&["current_time".into()], &all())[0].name, "current_time");
    }

    #[test]
    fn every_built_in_tool_refuses_fields_its_schema_does_not_name() {
        let registry = Registry::builtin(web_fetch::FetchPolicy::default());
        for tool in registry.tools.iter() {
            let schema = tool.parameters();
            assert_eq!(schema["additionalProperties"], false, "{} accepts unknown fields", tool.name());
            let decoy = serde_json::json!({ "x": { "url": "https://example.org/" } });
            let refused = known_fields_only(&schema, &decoy, "").unwrap_err();
            assert!(refused.contains("/x"), "{}: {refused}", tool.name());
        }
        let schema = serde_json::json!({
            "type": "object", "properties": { "url": { "type": "string" } }, "additionalProperties": false
        });
        assert!(known_fields_only(&schema, &serde_json::json!({ "url": "https://example.org/" }), "").is_ok());
    }

    #[test]
    fn a_search_needs_words_and_at_most_its_length() {
        let search = |query: Value| search_words(&query, "note_search", 200).map(str::to_owned);
        assert_eq!(search(serde_json::json!({ "query": "otter" })).as_deref(), Ok("otter"));
        assert!(search(serde_json::json!({ "query": "  " })).unwrap_err().contains("note_search needs \"query\""));
        assert!(search(serde_json::json!({})).is_err());
        assert!(search(serde_json::json!({ "query": "é".repeat(200) })).is_ok());
        assert!(search(serde_json::json!({ "query": "é".repeat(201) })).unwrap_err().contains("at most 200"));
    }

    #[test]
    fn unknown_tools_and_bad_arguments_come_back_as_errors_the_model_can_read() {
        let registry = Registry::builtin(web_fetch::FetchPolicy::default());
        let offered = registry.offered(&all(), &all());
        assert!(registry.find(&offered, "rm_rf").err().unwrap().contains("no tool"));
        assert!(registry.find(&[], "current_time").is_err(), "a tool not offered does not run");
        assert!(registry.find(&offered, "current_time").is_ok());
        assert!(parse_arguments("{\"tim").unwrap_err().contains("not valid JSON"));
        assert!(parse_arguments("[1]").unwrap_err().contains("object"));
        assert_eq!(parse_arguments("  ").unwrap(), serde_json::json!({}));
    }
}
