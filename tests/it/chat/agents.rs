//! Sub-agents, agent definitions and questions over the real server (§8.3, §8.5, §8.7):
//! `call_agent` frames within their limits, in call order, stopped and cut off like the
//! turn around them; definitions read at run time, with their versions on record; and
//! `clarify` questions answered from the inbox, also after a restart.

use std::time::Duration;

use reqwest::Method;
use scripted_model::{Reply, ScriptedCall};
use serde_json::{Value, json};

use super::{Chat, PASSWORD, WAIT};
use crate::support::Server;

impl Chat {
    /// Writes an agent through the administrators' route.
    async fn put_agent(&self, id: &str, tools: &[&str], prompt: &str) {
        let body = json!({ "meta": { "name": id, "description": format!("The {id} agent."), "tools": tools }, "prompt": prompt });
        let path = format!("/api/agents/{id}");
        let (status, saved) = self.server.call(Method::PUT, &path, Some(&self.token), Some(body)).await;
        assert_eq!(status, 200, "{saved}");
    }

    async fn agents(&self) -> Value {
        let (status, body) = self.server.call(Method::GET, "/api/agents", Some(&self.token), None).await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// Waits for the first pending card.
    async fn first_card(&self) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let (_, inbox) = self.server.call(Method::GET, "/api/inbox", Some(&self.token), None).await;
            if let Some(card) = inbox.as_array().and_then(|cards| cards.first()) {
                return card.clone();
            }
            assert!(tokio::time::Instant::now() < deadline, "no card came");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// Starts a turn whose planner frame streams `text` and then hangs; returns once the
/// frame's first token arrived.
async fn hanging_in_a_frame(chat: &Chat, text: &str) -> String {
    chat.model.push(Reply::tool_calls([call_agent("planner", "think slowly")]));
    chat.model.push(Reply { hang: true, ..Reply::text(text) });
    let mut socket = chat.socket().await;
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "plan").await;
    loop {
        let event = socket.next_event().await;
        if event["type"] == "token" && event["frame"].is_string() {
            return session;
        }
    }
}

fn call_agent(agent: &str, task: &str) -> ScriptedCall {
    ScriptedCall::new("call_agent", json!({ "agent": agent, "task": task }))
}

/// The conversation's own tool rows (not those inside frames).
fn own_results(history: &[Value]) -> Vec<&Value> {
    history.iter().filter(|m| m["role"] == "tool" && m.get("frame_id").is_none()).collect()
}

fn frames(history: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> =
        history.iter().filter_map(|m| m.get("frame_id").and_then(Value::as_str)).map(str::to_owned).collect();
    ids.sort();
    ids.dedup();
    ids
}

#[tokio::test]
async fn agents_call_each_other_at_most_five_deep_and_the_sixth_level_is_refused() {
    let chat = Chat::start().await;
    chat.put_agent("relay", &["call_agent"], "Pass every task on to the relay agent.").await;
    for _ in 0..5 {
        chat.model.push(Reply::tool_calls([call_agent("relay", "go deeper")]));
    }
    for depth in (1..=5).rev() {
        chat.model.push(Reply::text(format!("answer from depth {depth}")));
    }
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "start the chain").await;
    let history = chat.finished(&session).await;
    assert_eq!(history.last().unwrap()["text"], "answer from depth 1", "the turn ended cleanly");
    assert_eq!(frames(&history).len(), 4, "frames at depths 2 to 5");
    let refused: Vec<&Value> = history
        .iter()
        .filter(|m| m["role"] == "tool" && m["text"].as_str().unwrap().contains("at most 5 deep"))
        .collect();
    assert_eq!(refused.len(), 1, "{history:#?}");
    assert_eq!(refused[0]["status"], "error");
    assert!(refused[0]["text"].as_str().unwrap().contains("would be 6 deep"));
    assert_eq!(own_results(&history)[0]["text"], "answer from depth 2");
    assert_eq!(chat.model.request_count(), 10, "no request was made for the sixth level");
}

#[tokio::test]
async fn three_agent_calls_in_one_response_run_and_are_recorded_in_call_order() {
    let chat = Chat::start().await;
    chat.model.push(Reply::tool_calls([
        call_agent("planner", "task one"),
        call_agent("planner", "task two"),
        call_agent("planner", "task three"),
    ]));
    // Nothing more is scripted: each callee echoes its task, so results show whose is whose.
    let mut socket = chat.socket().await;
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "plan three things").await;
    let events = socket.until_turn_end().await;
    let history = chat.finished(&session).await;
    let results: Vec<&str> = own_results(&history).iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(results, ["You said: task one", "You said: task two", "You said: task three"]);
    assert_eq!(frames(&history).len(), 3);
    let started: Vec<&Value> = events.iter().filter(|e| e["type"] == "frame_started").collect();
    assert_eq!(started.len(), 3, "{events:?}");
    assert!(started.iter().all(|e| e["agent"] == "planner" && e["depth"] == 2 && e["frame"].is_string()));
    // The planner's definition offers no tools, and its requests carried its own prompt.
    let requests = chat.model.requests();
    let planner = requests.iter().find(|r| r.body["messages"][1]["content"] == "task two").unwrap();
    assert!(crate::support::unprefixed(&planner.body["messages"][0]["content"]).starts_with("You are the Planner"));
    assert!(planner.body.get("tools").is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)), "{}", planner.body);
}

#[tokio::test]
async fn stop_during_a_sub_agent_stops_it_and_the_turn() {
    let chat = Chat::start().await;
    let session = hanging_in_a_frame(&chat, "Still thinking about it").await;
    let (status, stopped) =
        chat.server.post(&format!("/api/sessions/{session}/stop"), Some(&chat.token), json!({})).await;
    assert_eq!((status, stopped["stopped"].as_bool()), (200, Some(true)));
    let history = chat.finished(&session).await;
    assert_eq!(history.last().unwrap()["status"], "stopped");
    assert_eq!(own_results(&history)[0]["status"], "cancelled");
    let frame_end = history.iter().find(|m| m.get("frame_id").is_some() && m["role"] == "assistant").unwrap();
    assert_eq!(
        (frame_end["status"].as_str(), frame_end["text"].as_str()),
        (Some("stopped"), Some("Still thinking about it"))
    );
}

#[tokio::test]
async fn a_restart_in_the_middle_of_a_sub_agent_closes_its_frame_with_an_error() {
    let chat = Chat::start().await;
    let session = hanging_in_a_frame(&chat, "Cut off").await;
    let Chat { server, model, .. } = chat;
    let server = Server::start_in(server.stop("KILL"));
    let (_, login) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let chat = Chat { server, token: login["token"].as_str().unwrap().to_owned(), model };
    let history = chat.finished(&session).await;
    let last = history.last().unwrap();
    assert_eq!((last["status"].as_str(), last["error_code"].as_str()), (Some("error"), Some("interrupted")));
    let result = own_results(&history)[0];
    assert_eq!((result["tool_name"].as_str(), result["status"].as_str()), (Some("call_agent"), Some("error")));
    assert_eq!(history.iter().filter(|m| m["role"] == "tool").count(), 1, "one result for the one call");
}

#[tokio::test]
async fn a_callee_cannot_use_a_tool_its_caller_may_not() {
    let chat = Chat::start().await;
    chat.put_agent("lister", &["call_agent"], "Hand writing tasks to the writer agent.").await;
    chat.put_agent("writer", &["note_write", "current_time"], "Write notes.").await;
    chat.model.push(Reply::tool_calls([call_agent("lister", "get a note written")]));
    chat.model.push(Reply::tool_calls([call_agent("writer", "write a note saying hi")]));
    chat.model.push(Reply::tool_calls([ScriptedCall::new("note_write", json!({ "title": "hi", "text": "hi" }))]));
    chat.model.push(Reply::text("I could not write it."));
    chat.model.push(Reply::text("The writer could not."));
    chat.model.push(Reply::text("No note was written."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "write hi").await;
    let history = chat.finished(&session).await;
    assert_eq!(history.last().unwrap()["text"], "No note was written.");
    let requests = chat.model.requests();
    let writer = &requests[2].body;
    assert_eq!(crate::support::unprefixed(&writer["messages"][0]["content"]), "Write notes.");
    let tools: Vec<&str> = writer
        .get("tools")
        .and_then(Value::as_array)
        .map(|tools| tools.iter().map(|t| t["function"]["name"].as_str().unwrap()).collect())
        .unwrap_or_default();
    assert!(tools.is_empty(), "the lister may only call agents, so the writer gets nothing: {tools:?}");
    let refused = history.iter().find(|m| m["tool_name"] == "note_write").unwrap();
    assert_eq!(refused["status"], "error");
    assert!(refused["text"].as_str().unwrap().contains("no tool named"), "{refused}");
    let (_, inbox) = chat.server.call(Method::GET, "/api/inbox", Some(&chat.token), None).await;
    assert_eq!(inbox, json!([]), "nothing to approve: the call never got that far");
    let (_, notes) = chat.server.call(Method::GET, "/api/notes", Some(&chat.token), None).await;
    assert_eq!(notes, json!([]));
}

#[tokio::test]
async fn an_edited_agent_md_applies_on_the_next_turn_and_everyone_else_is_told() {
    let chat = Chat::start().await;
    let (_, added) = chat.server.post("/api/users", Some(&chat.token), json!({ "name": "Bo", "role": "member" })).await;
    let enrol =
        json!({ "name": "Bo", "enrolment_code": added["enrolment_code"], "password": "maple harbour seventeen" });
    let (_, enrolled) = chat.server.post("/api/enrol", None, enrol).await;
    let bo = enrolled["token"].as_str().unwrap().to_owned();

    let session = chat.new_session(json!({})).await;
    chat.send(&session, "hello").await;
    chat.finished(&session).await;
    let before = chat.agents().await["agents"].as_array().unwrap().iter().find(|a| a["id"] == "main").unwrap().clone();
    assert_eq!(before["source"], "bundled");

    // Edited on disk, outside Skald: the next turn waits until Ada has seen that, then
    // reads it, with no restart.
    std::fs::write(chat.server.data_dir().join("agents/main/AGENT.md"), "Answer in French.").unwrap();
    let path = format!("/api/sessions/{session}/messages");
    let (status, held) = chat.server.post(&path, Some(&chat.token), json!({ "text": "hello again" })).await;
    assert_eq!((status, held["error"]["code"].as_str()), (409, Some("held")), "{held}");
    assert_eq!(crate::support::accept_holds(&chat.server, &chat.token).await, 1);
    chat.send(&session, "hello again").await;
    chat.finished(&session).await;
    let last = chat.model.requests().last().unwrap().body.clone();
    assert_eq!(crate::support::unprefixed(&last["messages"][0]["content"]), "Answer in French.");
    let after = chat.agents().await["agents"].as_array().unwrap().iter().find(|a| a["id"] == "main").unwrap().clone();
    assert_ne!(after["hash"], before["hash"]);
    assert_eq!((after["source"].as_str(), after["changed_by"].clone()), (Some("disk"), Value::Null));

    // Changed by an administrator through Skald: Bo is told who did it; Ada, who did it, is not.
    chat.put_agent("planner", &[], "Plan in three steps.").await;
    let deadline = tokio::time::Instant::now() + WAIT;
    let notices = loop {
        let (_, notices) = chat.server.call(Method::GET, "/api/notices", Some(&bo), None).await;
        if notices.as_array().unwrap().iter().filter(|n| n["kind"] == "agent_changed").count() >= 2 {
            break notices;
        }
        assert!(tokio::time::Instant::now() < deadline, "no notices: {notices}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    let agents: Vec<(&str, &str)> = notices
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "agent_changed")
        .map(|n| (n["body"]["agent"].as_str().unwrap(), n["body"]["source"].as_str().unwrap()))
        .collect();
    assert_eq!(agents, [("main", "disk"), ("planner", "app")]);
    // Both edits hold Bo's next turns until he has seen them (§3), the one on disk named
    // as made outside Skald.
    let held: Vec<(&str, &Value)> = notices
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["holds"] == true)
        .map(|n| (n["body"]["key"].as_str().unwrap(), &n["body"]["changed_by"]["name"]))
        .collect();
    assert_eq!(held, [("agent.main", &Value::Null), ("agent.planner", &json!("Ada"))], "{notices}");
    let (_, adas) = chat.server.call(Method::GET, "/api/notices", Some(&chat.token), None).await;
    assert_eq!(adas.as_array().unwrap().len(), 1, "Ada hears of the disk edit only: {adas}");
    let upto = notices.as_array().unwrap().last().unwrap()["id"].clone();
    let (status, _) = chat.server.post("/api/notices/seen", Some(&bo), json!({ "upto": upto })).await;
    assert_eq!(status, 200);
    let (_, left) = chat.server.call(Method::GET, "/api/notices", Some(&bo), None).await;
    let left: Vec<&str> = left.as_array().unwrap().iter().map(|n| n["kind"].as_str().unwrap()).collect();
    assert_eq!(left, ["held_change", "held_change"], "seen does not release a hold");
    let planner =
        chat.agents().await["agents"].as_array().unwrap().iter().find(|a| a["id"] == "planner").unwrap().clone();
    assert_eq!(planner["changed_by"]["name"], "Ada");
    // Members may read the list but not change it.
    let body = json!({ "meta": { "name": "x" }, "prompt": "x" });
    let (status, _) = chat.server.call(Method::PUT, "/api/agents/planner", Some(&bo), Some(body)).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn a_malformed_meta_json_is_reported_and_skipped_never_fatal() {
    let chat = Chat::start().await;
    let broken = chat.server.data_dir().join("agents/broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("meta.json"), "{ \"name\": ").unwrap();
    std::fs::write(broken.join("AGENT.md"), "Never used.").unwrap();
    let listed = chat.agents().await;
    let problems = listed["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{listed}");
    assert_eq!(problems[0]["id"], "broken");
    assert!(problems[0]["error"].as_str().unwrap().contains("meta.json"), "{listed}");
    assert!(listed["agents"].as_array().unwrap().iter().all(|a| a["id"] != "broken"));
    // Turns go on; list_agents leaves it out; a call to it is an error the model can read.
    chat.model.push(Reply::tool_calls([ScriptedCall::new("list_agents", json!({})), call_agent("broken", "x")]));
    chat.model.push(Reply::text("Fine."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "who can help?").await;
    let history = chat.finished(&session).await;
    let results = own_results(&history);
    let listing = results[0]["text"].as_str().unwrap();
    assert!(listing.contains("planner") && listing.contains("researcher") && !listing.contains("broken"), "{listing}");
    assert_eq!(results[1]["status"], "error");
    assert!(results[1]["text"].as_str().unwrap().contains("cannot be used"), "{}", results[1]);
    assert_eq!(history.last().unwrap()["status"], "done");
    // A conversation with it starts, and its first turn says why it cannot go on.
    let (status, created) = chat.server.post("/api/sessions", Some(&chat.token), json!({ "agent": "broken" })).await;
    assert_eq!(status, 201, "{created}");
    let path = format!("/api/sessions/{}/messages", created["id"].as_str().unwrap());
    let (status, refused) = chat.server.post(&path, Some(&chat.token), json!({ "text": "hi" })).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("agent_invalid")), "{refused}");
    // A restart is no problem either.
    let Chat { server, model, .. } = chat;
    let server = Server::start_in(server.stop("TERM"));
    let (status, _) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 200);
    drop(model);
}

#[tokio::test]
async fn a_clarify_question_parks_the_turn_and_the_answer_resumes_it_also_after_a_restart() {
    let chat = Chat::start().await;
    let question = json!({ "question": "Which day suits you?", "suggestions": ["Monday", "Tuesday"] });
    chat.model.push(Reply::tool_calls([ScriptedCall::new("clarify", question)]));
    chat.model.push(Reply::text("Tuesday it is."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "book the usual").await;
    let card = chat.first_card().await;
    assert_eq!(card["kind"], "question");
    assert_eq!(card["summary"], "Which day suits you?");
    assert_eq!(card["details"]["suggestions"], json!(["Monday", "Tuesday"]));
    let path = format!("/api/inbox/{}", card["id"].as_str().unwrap());
    let (status, wrong) = chat.server.post(&path, Some(&chat.token), json!({ "decision": "allow" })).await;
    assert_eq!((status, wrong["error"]["code"].as_str()), (400, Some("wrong_card_kind")));

    let Chat { server, model, .. } = chat;
    let server = Server::start_in(server.stop("KILL"));
    let (_, login) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let chat = Chat { server, token: login["token"].as_str().unwrap().to_owned(), model };
    assert_eq!(chat.first_card().await["id"], card["id"], "the question survived the restart");
    let (status, answered) =
        chat.server.post(&path, Some(&chat.token), json!({ "answer": "Tuesday, after ten" })).await;
    assert_eq!((status, answered["resumed"].as_bool()), (200, Some(true)), "{answered}");
    assert_eq!(answered["card"]["details"]["answer"], "Tuesday, after ten");
    let history = chat.finished(&session).await;
    assert_eq!(history.last().unwrap()["text"], "Tuesday it is.");
    let told = chat.model.requests().last().unwrap().body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(told["content"], "The person answered: Tuesday, after ten");
    let (status, again) = chat.server.post(&path, Some(&chat.token), json!({ "answer": "Monday" })).await;
    assert_eq!((status, again["error"]["code"].as_str()), (409, Some("already_decided")));
}

#[tokio::test]
async fn a_card_inside_a_sub_agent_parks_the_whole_turn_and_the_decision_resumes_inside_the_frame() {
    let chat = Chat::start().await;
    chat.put_agent("scribe", &["note_write"], "Write the notes you are asked for.").await;
    chat.model.push(Reply::tool_calls([call_agent("scribe", "note: buy stamps")]));
    chat.model.push(Reply::tool_calls([ScriptedCall::new("note_write", json!({ "title": "Stamps", "text": "buy" }))]));
    chat.model.push(Reply::text("Written."));
    chat.model.push(Reply::text("The scribe wrote it."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "have the scribe note it").await;
    let card = chat.first_card().await;
    assert_eq!(
        (card["details"]["tool"].as_str(), card["details"]["agent"].as_str()),
        (Some("note_write"), Some("scribe"))
    );
    let (_, state) = chat.server.call(Method::GET, &format!("/api/sessions/{session}"), Some(&chat.token), None).await;
    assert_eq!(state["turn_state"], "parked", "the whole turn waits");
    assert_eq!(chat.model.request_count(), 2);

    let path = format!("/api/inbox/{}", card["id"].as_str().unwrap());
    let (status, decided) = chat.server.post(&path, Some(&chat.token), json!({ "decision": "allow" })).await;
    assert_eq!((status, decided["resumed"].as_bool()), (200, Some(true)), "{decided}");
    let history = chat.finished(&session).await;
    assert_eq!(history.last().unwrap()["text"], "The scribe wrote it.");
    assert_eq!(own_results(&history)[0]["text"], "Written.", "the frame's answer is the call's result");
    assert_eq!(frames(&history).len(), 1, "the same frame went on");
    let (_, notes) = chat.server.call(Method::GET, "/api/notes", Some(&chat.token), None).await;
    assert_eq!(notes[0]["title"], "Stamps");
    // The frame's second request carried its own history: its task, its call and the result.
    let requests = chat.model.requests();
    let resumed = &requests[2].body["messages"];
    assert_eq!(crate::support::unprefixed(&resumed[0]["content"]), "Write the notes you are asked for.");
    assert_eq!(resumed[1]["content"], "note: buy stamps");
    assert_eq!(resumed.as_array().unwrap().last().unwrap()["role"], "tool");
}

#[tokio::test]
async fn a_callee_whose_definition_has_no_call_agent_cannot_open_frames_and_a_role_can_forbid_them() {
    let chat = Chat::start().await;
    // The planner's definition offers no tools: its call_agent only returns an error.
    chat.model.push(Reply::tool_calls([call_agent("planner", "plan")]));
    chat.model.push(Reply::tool_calls([call_agent("researcher", "look it up")]));
    chat.model.push(Reply::text("I can only plan."));
    chat.model.push(Reply::text("Here is the plan."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "plan it").await;
    let history = chat.finished(&session).await;
    assert_eq!(frames(&history).len(), 1, "no frame for the planner's call: {history:#?}");
    let inner = history.iter().find(|m| m["role"] == "tool" && m.get("frame_id").is_some()).unwrap();
    assert_eq!(inner["status"], "error");
    assert!(inner["text"].as_str().unwrap().contains("no tool named \"call_agent\""), "{inner}");

    // A role without sub-agents is not even offered call_agent.
    let patch = json!({ "may_use_subagents": false });
    let (status, body) = chat.server.call(Method::PATCH, "/api/roles/admin", Some(&chat.token), Some(patch)).await;
    assert_eq!(status, 200, "{body}");
    chat.model.push(Reply::tool_calls([call_agent("planner", "plan")]));
    chat.model.push(Reply::text("I will do it myself."));
    let other = chat.new_session(json!({})).await;
    chat.send(&other, "plan it again").await;
    let history = chat.finished(&other).await;
    let requests = chat.model.requests();
    let offered: Vec<&str> =
        requests[4].body["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(!offered.contains(&"call_agent") && offered.contains(&"current_time"), "{offered:?}");
    assert!(frames(&history).is_empty());
    assert_eq!(own_results(&history)[0]["status"], "error");
}

#[tokio::test]
async fn two_frames_that_both_meet_a_card_park_the_turn_once_and_both_go_on_after_the_decisions() {
    let chat = Chat::start().await;
    chat.put_agent("scribe", &["note_write"], "Write the notes you are asked for.").await;
    chat.model.push(Reply::tool_calls([call_agent("scribe", "note A"), call_agent("scribe", "note B")]));
    // Each scribe asks to write its note; which gets which reply does not matter.
    chat.model.push(Reply::tool_calls([ScriptedCall::new("note_write", json!({ "title": "A", "text": "a" }))]));
    chat.model.push(Reply::tool_calls([ScriptedCall::new("note_write", json!({ "title": "B", "text": "b" }))]));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "two notes").await;
    let deadline = tokio::time::Instant::now() + WAIT;
    let cards = loop {
        let (_, inbox) = chat.server.call(Method::GET, "/api/inbox", Some(&chat.token), None).await;
        if inbox.as_array().unwrap().len() == 2 {
            break inbox;
        }
        assert!(tokio::time::Instant::now() < deadline, "two cards did not come: {inbox}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    let (_, state) = chat.server.call(Method::GET, &format!("/api/sessions/{session}"), Some(&chat.token), None).await;
    assert_eq!(state["turn_state"], "parked");
    for (i, card) in cards.as_array().unwrap().iter().enumerate() {
        let path = format!("/api/inbox/{}", card["id"].as_str().unwrap());
        let (status, decided) = chat.server.post(&path, Some(&chat.token), json!({ "decision": "allow" })).await;
        assert_eq!((status, decided["resumed"].as_bool()), (200, Some(i == 1)), "{decided}");
    }
    // Both scribes, then the turn, finish (unscripted, each echoes its last message).
    let history = chat.finished(&session).await;
    assert_eq!(history.last().unwrap()["status"], "done");
    let results: Vec<&str> = own_results(&history).iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(results, ["You said: note A", "You said: note B"], "each frame's answer, in call order");
    let (_, notes) = chat.server.call(Method::GET, "/api/notes", Some(&chat.token), None).await;
    assert_eq!(notes.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn agent_calls_of_one_response_run_at_the_same_time_four_at_most() {
    let chat = Chat::start().await;
    let calls: Vec<ScriptedCall> = (1..=5).map(|i| call_agent("planner", &format!("task {i}"))).collect();
    chat.model.push(Reply::tool_calls(calls));
    for _ in 0..5 {
        chat.model.push(Reply { hang: true, ..Reply::text("working") });
    }
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "five plans").await;
    // Every callee's reply hangs: requests only pile up if the frames run side by side.
    let deadline = tokio::time::Instant::now() + WAIT;
    while chat.model.request_count() < 5 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "only {} requests: frames ran one by one",
            chat.model.request_count()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(chat.model.request_count(), 5, "the turn's request and four frames; the fifth waits for a slot");
    let (status, _) = chat.server.post(&format!("/api/sessions/{session}/stop"), Some(&chat.token), json!({})).await;
    assert_eq!(status, 200);
    let history = chat.finished(&session).await;
    let statuses: Vec<&str> = own_results(&history).iter().map(|m| m["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["cancelled"; 5], "each call has its one result, in order");
}
