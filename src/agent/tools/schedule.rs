//! `schedule`, `list_schedules` and `cancel_schedule` (§11): the model proposes a reminder
//! or a task, and the person confirms it on a card that shows when it comes, in their local
//! time. The jobs service does the work, through `agent::scheduling`.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};

pub struct Schedule;

impl Tool for Schedule {
    fn name(&self) -> &'static str {
        super::super::scheduling::SCHEDULE
    }

    fn description(&self) -> &'static str {
        "Schedules a reminder (a notification with the given text at its time; no model is asked) \
         or a task (the text is a prompt run for the person at its time, its answer kept in a \
         conversation of its own). Once: give \"at\", a date and time such as 2027-03-28T07:30 \
         read in \"zone\" (call current_time first for \"in 20 minutes\" or \"tomorrow\"). \
         Repeating: give \"cron\", exactly 5 fields (minute hour day-of-month month day-of-week), \
         e.g. \"0 7 * * 1-5\" for every weekday at 07:00. The person confirms it on a card that \
         shows the next times; an error says what to fix."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "kind": { "type": "string", "enum": ["reminder", "task"] },
                "text": { "type": "string", "maxLength": 4000, "description": "What the reminder says, or what the task asks." },
                "at": { "type": "string", "description": "A one-off: a date and time, e.g. 2027-03-28T07:30 (in zone)." },
                "cron": { "type": "string", "description": "A repeating pattern of 5 fields, e.g. 30 21 * * 1." },
                "zone": { "type": "string", "description": "An IANA time zone such as Europe/Oslo; this computer's when left out." },
                "missed": { "type": "string", "enum": ["skip", "run_once"], "description": "If Skald was closed at its time: only say so (skip), or also run it once." },
                "agent": { "type": "string", "description": "A task's agent; main when left out." },
                "model": { "type": "string", "description": "A task's model (provider/model); left out, the agent's choice." },
                "for": { "type": "string", "description": "A reminder for another member: their name." },
                "shared": { "type": "boolean", "description": "A reminder for everyone, its text readable by all." }
            },
            "required": ["kind", "text"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move { context.scheduling.get()?.schedule(&context.session, &arguments).await })
    }
}

pub struct ListSchedules;

impl Tool for ListSchedules {
    fn name(&self) -> &'static str {
        "list_schedules"
    }

    fn description(&self) -> &'static str {
        "Lists the person's reminders and scheduled tasks, and the shared ones: id, kind, what it \
         says, when it next comes (local time) and how it repeats. Use it before cancel_schedule."
    }

    fn parameters(&self) -> Value {
        json!({ "type": "object", "properties": {}, "additionalProperties": false })
    }

    fn side_effects(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, _: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move { context.scheduling.get()?.list(&context.session).await })
    }
}

pub struct CancelSchedule;

impl Tool for CancelSchedule {
    fn name(&self) -> &'static str {
        "cancel_schedule"
    }

    fn description(&self) -> &'static str {
        "Deletes one of the person's reminders or scheduled tasks for good, by its id (from \
         list_schedules). Use it only when the person asks for that."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": { "id": { "type": "string", "description": "The job's id, from list_schedules." } },
            "required": ["id"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let Some(id) = arguments["id"].as_str() else {
                return Err("cancel_schedule needs \"id\", a job's id from list_schedules".into());
            };
            context.scheduling.get()?.cancel(&context.session, id).await
        })
    }
}
