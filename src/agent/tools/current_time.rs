//! `current_time`: the date and time now, in the machine's time zone or a named one.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};

pub struct CurrentTime;

impl Tool for CurrentTime {
    fn name(&self) -> &'static str {
        "current_time"
    }

    fn description(&self) -> &'static str {
        "The current date, time and weekday. Without arguments, in this computer's time zone."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "timezone": { "type": "string", "description": "An IANA time zone such as Europe/Paris; optional." }
            },
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, arguments: Value, _: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move { now_in(arguments["timezone"].as_str()) })
    }
}

fn now_in(zone: Option<&str>) -> ToolResult {
    let now = jiff::Zoned::now();
    let now = match zone {
        Some(name) => now.in_tz(name).map_err(|_| format!("{name:?} is not a known time zone"))?,
        None => now,
    };
    let zone_name = now.time_zone().iana_name().unwrap_or("local").to_owned();
    Ok(json!({
        "now": now.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string(),
        "weekday": now.strftime("%A").to_string(),
        "timezone": zone_name,
    })
    .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_is_given_with_its_zone_and_an_unknown_zone_is_an_error() {
        let paris: Value = serde_json::from_str(&now_in(Some("Europe/Paris")).unwrap()).unwrap();
        assert_eq!(paris["timezone"], "Europe/Paris");
        assert!(paris["now"].as_str().unwrap().len() >= 25);
        assert!(now_in(Some("Mars/Olympus")).unwrap_err().contains("not a known"));
    }
}
