//! How history becomes model context (§8.1): the one place stored rows turn into the
//! messages a model reads — for a turn's start, a resumed frame, a compacted context and
//! a stored request composed again ([`rebuild`]). Pure but for [`rebuild`]'s reads.

use super::compaction;
use crate::ids::ConversationId;
use crate::providers::{ChatRequest, ContextMessage, ToolCall, ToolSpec};
use crate::store::StoreError;
use crate::store::chat::{self, Message, MessageRole, StoredCall};
use crate::store::private::PrivateStore;
use crate::store::providers::ProviderKind;

/// The version of how requests are composed from stored parts (the system prompt, then
/// the history through [`compose_context`], then the tools). Bump it whenever that changes:
/// a stored request is only recomposed by the version that made it.
pub const RENDER_VERSION: i64 = 1;

/// Why a stored request cannot be composed again.
#[derive(Debug, thiserror::Error)]
pub enum RebuildError {
    #[error("there is no such request in this conversation, or it was made before its parts were kept")]
    NotFound,
    #[error("this request was composed by render version {0}; this Skald composes with version {RENDER_VERSION}")]
    OtherVersion(i64),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A stored model request composed again from what was stored: the protocol, the body
/// exactly as it was sent, whatever changed in the agent or the tools since (§8.1), and
/// whether an erased memory was redacted from what it read, or a picture it carried has
/// been deleted since (then the body differs from what was sent exactly there, §10,
/// §12.2). Pictures are read from their documents, in `space` or the shared pool.
pub async fn rebuild(
    space: &PrivateStore,
    system: &crate::store::system::SystemStore,
    session_id: &ConversationId,
    request_id: i64,
) -> Result<(ProviderKind, serde_json::Value, bool), RebuildError> {
    let stored = chat::stored_request(space, session_id, request_id).await?.ok_or(RebuildError::NotFound)?;
    if stored.source.summary_id.is_some() && stored.summary.is_none() {
        return Err(RebuildError::NotFound); // its summary is gone: composing without it would be wrong
    }
    let source = stored.source;
    if source.render_version != RENDER_VERSION {
        return Err(RebuildError::OtherVersion(source.render_version));
    }
    let after = stored.summary.as_ref().map_or(0, |s| s.upto);
    // The path of the request's own turn: what the conversation read then, whatever version
    // of it is active now.
    let history =
        chat::history_between(space, session_id, chat::Path::Of(&stored.turn_id), after, source.history_upto).await?;
    let summary = stored.summary.as_ref().map(|s| s.text.as_str());
    let mut request =
        compose(stored.model, &source.prompt, summary, &history, crate::providers::tools_from_json(&source.tools));
    request.images = source.images;
    super::documents::load_pictures(space, system, &mut request.messages).await?;
    let body = crate::providers::body(source.kind, &request);
    let picture_gone = request.messages.iter().any(|m| matches!(m, ContextMessage::Picture(p) if p.data.is_none()));
    let redacted = picture_gone
        || history.iter().any(|m| m.redacted)
        || summary.is_some_and(|s| s.contains(crate::store::memories::ERASED));
    Ok((source.kind, body, redacted))
}

/// A request from its parts — the agent's prompt, the summary standing in for older rows,
/// the conversation's rows after it — the one place requests are composed (see
/// [`RENDER_VERSION`]).
fn compose(
    model: String,
    prompt: &str,
    summary: Option<&str>,
    history: &[Message],
    tools: Vec<ToolSpec>,
) -> ChatRequest {
    let messages = compose_context(prompt, summary, history, Rows::Conversation);
    ChatRequest { model, messages, tools, cache_key: cache_key_of(prompt), max_tokens: None, images: false }
}

/// Whose rows of a history a context reads.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rows<'a> {
    /// The conversation's own, not those of the sub-agent frames inside it.
    Conversation,
    /// One frame's own work (§8.3).
    Frame(&'a str),
}

/// What a model reads: the prompt, the summary standing in for older rows, then the rows
/// of `history` that are `whose`. Stored tool rows hold exactly what the model was given;
/// an errored turn's empty closing row is no message at all.
pub(crate) fn compose_context(
    prompt: &str,
    summary: Option<&str>,
    history: &[Message],
    whose: Rows,
) -> Vec<ContextMessage> {
    let mut messages = vec![ContextMessage::System(prompt.to_owned())];
    messages.extend(summary.map(compaction::summary_message));
    let frame = match whose {
        Rows::Conversation => None,
        Rows::Frame(id) => Some(id),
    };
    for row in history.iter().filter(|m| m.frame_id.as_deref() == frame) {
        messages.extend(as_message(row));
        // The pictures a message carries follow its words; their bytes are read later.
        messages.extend(row.images.iter().flatten().map(picture_of));
    }
    messages
}

/// A picture a message carries, as a context message whose bytes are not read yet.
pub(super) fn picture_of(picture: &chat::AttachedPicture) -> ContextMessage {
    ContextMessage::Picture(crate::providers::Picture {
        document: picture.document.clone(),
        media_type: picture.media_type.clone(),
        data: None,
    })
}

/// A system prompt as sent for a person: their own random line first, so no two people's
/// requests share a prefix a provider's prompt cache could be timed on (issue 22 #13),
/// then `prompt`. It is what a request's record keeps, so rebuilding needs nothing else.
pub fn prompt_for(prefix: &str, prompt: &str) -> String {
    format!("<!-- {prefix} -->\n{prompt}")
}

/// The person's key in a prompt made by [`prompt_for`]: sent to providers that keep
/// caches per end user. None for prompts from before there was one.
pub fn cache_key_of(prompt: &str) -> Option<String> {
    let key = prompt.strip_prefix("<!-- ")?.split_once(" -->\n")?.0;
    (key.len() == 32 && key.bytes().all(|b| b.is_ascii_hexdigit())).then(|| key.to_owned())
}

/// One row as a model reads it.
fn as_message(m: &Message) -> Option<ContextMessage> {
    match m.role {
        MessageRole::User => Some(ContextMessage::User(m.text.clone())),
        MessageRole::Assistant => {
            let tool_calls = m.tool_calls.as_ref().map(calls_from_json).unwrap_or_default();
            (!m.text.is_empty() || !tool_calls.is_empty())
                .then(|| ContextMessage::Assistant { text: m.text.clone(), tool_calls })
        }
        MessageRole::Tool => Some(ContextMessage::Tool {
            call_id: m.tool_call_id.as_deref().unwrap_or_default().to_owned(),
            content: m.text.clone(),
        }),
    }
}

/// Tool calls as stored with an assistant row.
pub fn calls_to_json(calls: &[ToolCall]) -> serde_json::Value {
    let stored: Vec<StoredCall> = calls
        .iter()
        .map(|c| StoredCall { id: c.id.clone(), name: c.name.clone(), arguments: c.arguments.clone() })
        .collect();
    serde_json::to_value(stored).expect("calls serialize")
}

fn calls_from_json(value: &serde_json::Value) -> Vec<ToolCall> {
    value
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| ToolCall {
                    id: c["id"].as_str().unwrap_or_default().to_owned(),
                    name: c["name"].as_str().unwrap_or_default().to_owned(),
                    arguments: c["arguments"].as_str().unwrap_or_default().to_owned(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// How many frames a turn has opened, from its rows.
pub(super) fn frame_count(history: &[Message], turn_id: &str) -> usize {
    let mut frames: Vec<&str> =
        history.iter().filter(|m| m.turn_id == turn_id).filter_map(|m| m.frame_id.as_deref()).collect();
    frames.sort_unstable();
    frames.dedup();
    frames.len()
}

/// The calls of a turn's latest tool request in one frame (none for the conversation's
/// own) that have no result yet, with the text the model wrote beside them: what a resumed
/// turn or frame settles first.
pub(super) fn unsettled_calls(
    history: &[Message],
    turn_id: &str,
    frame: Option<&str>,
) -> Option<(String, Vec<ToolCall>)> {
    let ours = |m: &&Message| m.turn_id == turn_id && m.frame_id.as_deref() == frame;
    let asked =
        history.iter().filter(ours).rev().find(|m| m.role == MessageRole::Assistant && m.tool_calls.is_some())?;
    let answered: Vec<&str> = history
        .iter()
        .filter(ours)
        .filter(|m| m.role == MessageRole::Tool)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    let calls: Vec<ToolCall> = asked
        .tool_calls
        .as_ref()
        .map(calls_from_json)
        .unwrap_or_default()
        .into_iter()
        .filter(|c| !answered.contains(&c.id.as_str()))
        .collect();
    (!calls.is_empty()).then(|| (asked.text.clone(), calls))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::ids::FrameId;
    use crate::store::chat::MessageStatus;

    /// A history row of `turn_1`, for tests here and in the turn.
    pub(in crate::agent) fn row(id: i64, role: MessageRole, text: &str, frame: Option<&str>) -> Message {
        Message {
            id,
            turn_id: "turn_1".into(),
            frame_id: frame.map(FrameId::new),
            role,
            text: text.into(),
            status: MessageStatus::Done,
            model: None,
            created_at: String::new(),
            tool_calls: None,
            tool_call_id: None,
            tool_name: None,
            error_code: None,
            error_message: None,
            redacted: false,
            images: None,
        }
    }

    fn asked(id: i64, calls: &[&str], frame: Option<&str>) -> Message {
        let calls: Vec<ToolCall> =
            calls.iter().map(|id| ToolCall { id: (*id).into(), name: "t".into(), arguments: "{}".into() }).collect();
        Message { tool_calls: Some(calls_to_json(&calls)), ..row(id, MessageRole::Assistant, "Looking.", frame) }
    }

    fn result(id: i64, call: &str, frame: Option<&str>) -> Message {
        Message { tool_call_id: Some(call.into()), ..row(id, MessageRole::Tool, "42", frame) }
    }

    #[test]
    fn a_conversations_context_is_its_prompt_summary_and_own_rows_without_its_frames() {
        let history = [
            row(1, MessageRole::User, "Hi", None),
            row(2, MessageRole::User, "task", Some("frame_1")),
            row(3, MessageRole::Assistant, "Hello", None),
        ];
        let context = compose_context("prompt", Some("earlier"), &history, Rows::Conversation);
        assert_eq!(
            context,
            [
                ContextMessage::System("prompt".into()),
                compaction::summary_message("earlier"),
                ContextMessage::User("Hi".into()),
                ContextMessage::Assistant { text: "Hello".into(), tool_calls: Vec::new() },
            ]
        );
    }

    #[test]
    fn a_frames_context_is_its_prompt_and_its_own_rows_only() {
        let history = [row(1, MessageRole::User, "Hi", None), row(2, MessageRole::User, "task", Some("frame_1"))];
        let context = compose_context("callee", None, &history, Rows::Frame("frame_1"));
        assert_eq!(context, [ContextMessage::System("callee".into()), ContextMessage::User("task".into())]);
    }

    #[test]
    fn an_errored_turns_empty_closing_row_is_no_message_and_tool_rows_keep_their_call() {
        let history = [row(1, MessageRole::Assistant, "", None), result(2, "call_1", None)];
        let context = compose_context("p", None, &history, Rows::Conversation);
        assert_eq!(
            context[1..],
            [ContextMessage::Tool { call_id: "call_1".into(), content: "42".into() }],
            "the empty row is left out"
        );
    }

    #[test]
    fn stored_calls_read_back_as_the_calls_they_were() {
        let context = compose_context("p", None, &[asked(1, &["call_1"], None)], Rows::Conversation);
        let ContextMessage::Assistant { tool_calls, .. } = &context[1] else { panic!("an assistant message") };
        assert_eq!(tool_calls[0].id, "call_1");
    }

    #[test]
    fn a_resumed_turn_settles_the_calls_of_its_last_request_that_have_no_result() {
        let history = [asked(1, &["a", "b"], None), result(2, "a", None)];
        let (said, calls) = unsettled_calls(&history, "turn_1", None).unwrap();
        assert_eq!((said.as_str(), calls.len(), calls[0].id.as_str()), ("Looking.", 1, "b"));
        assert!(unsettled_calls(&history, "turn_1", Some("frame_1")).is_none(), "a frame has its own calls");
        assert!(unsettled_calls(&[asked(1, &["a"], None), result(2, "a", None)], "turn_1", None).is_none());
    }

    #[test]
    fn a_turns_frames_are_counted_once_each() {
        let history = [
            row(1, MessageRole::User, "x", Some("frame_1")),
            row(2, MessageRole::Assistant, "y", Some("frame_1")),
            row(3, MessageRole::User, "z", Some("frame_2")),
            row(4, MessageRole::User, "me", None),
        ];
        assert_eq!(frame_count(&history, "turn_1"), 2);
        assert_eq!(frame_count(&history, "turn_2"), 0);
    }

    #[test]
    fn a_prompt_for_a_person_carries_their_cache_key_and_an_old_one_none() {
        let key = "0123456789abcdef0123456789abcdef";
        assert_eq!(cache_key_of(&prompt_for(key, "Be brief.")).as_deref(), Some(key));
        assert_eq!(cache_key_of("Be brief."), None);
    }

    /// Generated histories (issue 31): the context composed from any well-formed history,
    /// and from what compaction keeps of it, has every tool result after its own call and
    /// before the next message of the person, and none of a sub-agent frame's rows.
    mod properties {
        use proptest::prelude::*;

        use super::*;
        use crate::agent::compaction;

        /// One turn: the person's message, then rounds of calls (each answered, in any
        /// order, some in a sub-agent frame between), then the reply.
        fn turn() -> impl Strategy<Value = Vec<(u8, u8, bool)>> {
            // (calls in the round, the order its results come back in, a frame between)
            proptest::collection::vec((0u8..4, any::<u8>(), any::<bool>()), 0..4)
        }

        fn history(turns: &[Vec<(u8, u8, bool)>]) -> Vec<Message> {
            let mut rows = Vec::new();
            let mut id = 0;
            let mut next = || {
                id += 1;
                id
            };
            for (t, rounds) in turns.iter().enumerate() {
                let turn = format!("turn_{t}");
                let in_turn = |m: Message| Message { turn_id: turn.as_str().into(), ..m };
                rows.push(in_turn(row(next(), MessageRole::User, "question", None)));
                for (r, &(calls, order, framed)) in rounds.iter().enumerate() {
                    let ids: Vec<String> = (0..calls).map(|c| format!("call_{t}_{r}_{c}")).collect();
                    let names: Vec<&str> = ids.iter().map(String::as_str).collect();
                    rows.push(in_turn(asked(next(), &names, None)));
                    if framed {
                        rows.push(in_turn(row(next(), MessageRole::User, "task", Some("frame_1"))));
                        rows.push(in_turn(asked(next(), &["inner"], Some("frame_1"))));
                        rows.push(in_turn(result(next(), "inner", Some("frame_1"))));
                    }
                    let mut answered = ids.clone();
                    answered.rotate_left(usize::from(order) % ids.len().max(1));
                    for call in &answered {
                        rows.push(in_turn(result(next(), call, None)));
                    }
                }
                rows.push(in_turn(row(next(), MessageRole::Assistant, "answer", None)));
            }
            rows
        }

        /// Every tool result follows its call and comes before the person speaks again.
        fn results_follow_their_calls(context: &[ContextMessage]) -> Result<(), String> {
            let mut open: Vec<String> = Vec::new();
            for message in context {
                match message {
                    ContextMessage::User(_) if !open.is_empty() => return Err(format!("{open:?} unanswered")),
                    ContextMessage::Assistant { tool_calls, .. } => {
                        open.extend(tool_calls.iter().map(|c| c.id.clone()))
                    }
                    ContextMessage::Tool { call_id, .. } => {
                        let at = open.iter().position(|c| c == call_id).ok_or(format!("{call_id} before its call"))?;
                        open.remove(at);
                    }
                    _ => {}
                }
            }
            if open.is_empty() { Ok(()) } else { Err(format!("{open:?} unanswered at the end")) }
        }

        proptest! {
            #[test]
            fn a_composed_context_never_parts_a_result_from_its_call(
                turns in proptest::collection::vec(turn(), 1..6),
                keep in 0i64..400,
            ) {
                let rows = history(&turns);
                let context = compose_context("prompt", None, &rows, Rows::Conversation);
                prop_assert_eq!(&context[0], &ContextMessage::System("prompt".into()));
                results_follow_their_calls(&context).map_err(TestCaseError::fail)?;
                prop_assert!(!context.iter().any(|m| matches!(m, ContextMessage::User(t) if t == "task")), "a frame's row");
                prop_assert!(
                    !context.iter().any(|m| matches!(m, ContextMessage::Tool { call_id, .. } if call_id == "inner")),
                    "a frame's result"
                );

                // Compaction cuts just before a message of the person, and what it keeps
                // composes as a whole conversation does.
                if let Some(upto) = compaction::cut(&rows, keep) {
                    let at = rows.iter().position(|m| m.id == upto).unwrap();
                    let kept = &rows[at + 1..];
                    prop_assert_eq!(kept[0].role, MessageRole::User);
                    prop_assert!(kept[0].frame_id.is_none());
                    let latest = rows.iter().rposition(|m| m.role == MessageRole::User && m.frame_id.is_none()).unwrap();
                    prop_assert!(at < latest, "the latest turn is always kept");
                    let context = compose_context("prompt", Some("earlier"), kept, Rows::Conversation);
                    prop_assert_eq!(&context[1], &compaction::summary_message("earlier"));
                    results_follow_their_calls(&context).map_err(TestCaseError::fail)?;
                }
            }
        }
    }
}
