//! The approval gate (§8.4): whether a tool call runs, is refused, or waits for a person.
//! Pure: the rules and the situation come in, a decision goes out. In order: any matching
//! `deny` wins (refusing is always safe); then a card the person allowed for exactly these
//! arguments stands for their decision; a confirmed write otherwise always requires, whatever
//! allows it; otherwise the matching rule with the lowest priority number; a tie between
//! different effects, or no match at all, requires. A role that may not approve turns
//! `require` into `deny` (until supervision exists).

use serde::Serialize;
use serde_json::Value;

use crate::patterns::allowed;
use crate::rules::canonical;
pub use crate::rules::{ArgsPattern, Effect, Rule, normalise_url};

/// Tools whose every call a person confirms, whatever the rules say.
pub const CONFIRMED_WRITES: [&str; 2] = ["remember", "schedule"];

/// The priority a person's own "always allow this for me" rules take: ahead of the
/// presets' `require` for writes, never ahead of an administrator's `deny`.
pub const PERSONAL_PRIORITY: i64 = 50;

/// Where a rule came from, for the decision's explanation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Shared,
    Personal,
}

/// What the gate knows about the call and the person making it.
#[derive(Debug, Clone)]
pub struct Situation<'a> {
    pub tool: &'a str,
    pub arguments: &'a Value,
    pub role: &'a str,
    /// The role lets this person approve calls.
    pub may_approve: bool,
    /// What the person may not approve goes to their supervisor as a card (§6.2).
    pub routed: bool,
    /// The tool changes something outside the conversation (writes, sends, fetches).
    pub side_effects: bool,
    /// Outside content (a fetched page, an MCP result) has entered this conversation: a
    /// person's own "always allow" no longer stands in for asking (injection hygiene).
    pub outside_content: bool,
    /// The arguments hash a person allowed on this call's card, if they did: it stands
    /// for their decision only while it matches these arguments.
    pub approved: Option<&'a str>,
    /// The tool's server marks it destructive (an MCP annotation): a person's own "always
    /// allow" no longer stands in for asking. Annotations only ever make the gate stricter.
    pub destructive: bool,
}

/// The gate's answer, with the reason a card or the audit can show.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub effect: Effect,
    pub reason: String,
}

/// Decides one call.
pub fn decide(situation: &Situation, shared: &[Rule], personal: &[Rule]) -> Decision {
    let decision = raw_decision(situation, shared, personal);
    if decision.effect == Effect::Require && !situation.may_approve && situation.routed {
        return Decision { effect: Effect::Require, reason: format!("{}; your supervisor decides", decision.reason) };
    }
    if decision.effect == Effect::Require && !situation.may_approve {
        return Decision {
            effect: Effect::Deny,
            reason: format!("{}; this role may not approve calls, so it is refused", decision.reason),
        };
    }
    decision
}

fn raw_decision(situation: &Situation, shared: &[Rule], personal: &[Rule]) -> Decision {
    let applies = |rule: &Rule| {
        allowed(std::slice::from_ref(&rule.tool), situation.tool)
            && rule.role.as_deref().is_none_or(|role| role == situation.role || role == "*")
            && rule.args.as_ref().is_none_or(|pattern| pattern.matches(rule.effect, situation.arguments))
    };
    // Once outside content (a fetched page) has entered the conversation, no allow stands
    // in for the person on a call with side effects — a shared rule's no more than their
    // own: the page's words may be what asked for it (a "notification from Skald" that
    // phishes). A person's own allows count only where their role lets them approve;
    // their own denies always count. None of their rules is weighed before
    // PERSONAL_PRIORITY.
    let tainted = situation.outside_content && situation.side_effects;
    let shared: Vec<&Rule> = shared.iter().filter(|r| r.effect != Effect::Allow || !tainted).collect();
    let allows_count = situation.may_approve && !tainted && !situation.destructive;
    let personal: Vec<Rule> = personal
        .iter()
        .filter(|r| r.effect != Effect::Allow || allows_count)
        .map(|r| Rule { priority: r.priority.max(PERSONAL_PRIORITY), ..r.clone() })
        .collect();
    let matching: Vec<(&Rule, Source)> = shared
        .into_iter()
        .filter(|r| applies(r))
        .map(|r| (r, Source::Shared))
        .chain(personal.iter().filter(|r| applies(r)).map(|r| (r, Source::Personal)))
        .collect();
    if let Some((rule, _)) = matching.iter().find(|(r, _)| r.effect == Effect::Deny) {
        return Decision { effect: Effect::Deny, reason: format!("a rule refuses {} calls", rule.tool) };
    }
    let approved_these =
        situation.approved.is_some_and(|hash| hash == arguments_hash(situation.tool, situation.arguments));
    if approved_these {
        return Decision { effect: Effect::Allow, reason: "the person allowed this call".into() };
    }
    if CONFIRMED_WRITES.contains(&situation.tool) {
        return require(format!("{} is always confirmed by the person", situation.tool));
    }
    let Some(best) = matching.iter().map(|(r, _)| r.priority).min() else {
        return require(format!("no rule covers {}", situation.tool));
    };
    let top: Vec<&(&Rule, Source)> = matching.iter().filter(|(r, _)| r.priority == best).collect();
    let effect = top[0].0.effect;
    if top.iter().any(|(r, _)| r.effect != effect) {
        return require(format!("rules of equal priority disagree about {}", situation.tool));
    }
    let reason = match (effect, top[0].1) {
        (Effect::Allow, Source::Personal) => format!("you chose to always allow {}", situation.tool),
        (Effect::Allow, Source::Shared) => format!("{} is allowed by a rule", situation.tool),
        (_, _) => format!("{} asks the person first", situation.tool),
    };
    Decision { effect, reason }
}

/// What a card's decision binds: the tool and its exact arguments, hashed. Two calls
/// with the same arguments in another key order hash alike; any other change does not.
pub fn arguments_hash(tool: &str, arguments: &Value) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0]);
    hasher.update(canonical(arguments).as_bytes());
    hex::encode(hasher.finalize())
}

fn require(reason: String) -> Decision {
    Decision { effect: Effect::Require, reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Effect::{Allow, Deny, Require};
    use serde_json::json;

    fn rule(tool: &str, effect: Effect, priority: i64) -> Rule {
        Rule { tool: tool.into(), args: None, role: None, effect, priority }
    }

    fn presets() -> Vec<Rule> {
        vec![
            rule("note_read", Allow, 100),
            rule("note_write", Require, 100),
            rule("web_fetch", Require, 100),
            rule("*", Require, 1000),
        ]
    }

    fn situation<'a>(tool: &'a str, arguments: &'a Value) -> Situation<'a> {
        Situation {
            tool,
            arguments,
            role: "member",
            may_approve: true,
            routed: false,
            side_effects: tool != "note_read",
            outside_content: false,
            approved: None,
            destructive: false,
        }
    }

    #[test]
    fn a_tool_marked_destructive_is_never_covered_by_a_persons_own_allow() {
        let args = json!({ "path": "/home" });
        let personal = [rule("mcp__files__delete", Allow, 50)];
        let plain = situation("mcp__files__delete", &args);
        assert_eq!(effect_of(&plain, &[], &personal), Allow);
        let destructive = Situation { destructive: true, ..plain.clone() };
        assert_eq!(effect_of(&destructive, &[], &personal), Require);
        // An administrator's explicit allow still stands; a deny always does.
        assert_eq!(effect_of(&destructive, &[rule("mcp__files__*", Allow, 10)], &[]), Allow);
        assert_eq!(effect_of(&destructive, &[rule("mcp__*", Deny, 10)], &personal), Deny);
    }

    fn effect_of(situation: &Situation, shared: &[Rule], personal: &[Rule]) -> Effect {
        decide(situation, shared, personal).effect
    }

    #[test]
    fn confirmed_write_always_requires() {
        let args = json!({ "text": "likes tea" });
        let allow_all = [rule("*", Allow, 1)];
        assert_eq!(effect_of(&situation("remember", &args), &allow_all, &allow_all), Require);
        assert_eq!(effect_of(&situation("schedule", &args), &allow_all, &[]), Require);
    }

    #[test]
    fn reads_are_allowed_and_writes_require_by_the_presets() {
        let args = json!({ "id": 1 });
        assert_eq!(effect_of(&situation("note_read", &args), &presets(), &[]), Allow);
        assert_eq!(effect_of(&situation("note_write", &args), &presets(), &[]), Require);
        assert_eq!(effect_of(&situation("web_fetch", &args), &presets(), &[]), Require);
    }

    #[test]
    fn no_matching_rule_requires() {
        let args = json!({});
        assert_eq!(effect_of(&situation("note_write", &args), &[rule("note_read", Allow, 1)], &[]), Require);
    }

    #[test]
    fn deny_beats_always_allow() {
        let args = json!({});
        let shared = [rule("note_write", Deny, 900)];
        let personal = [rule("note_write", Allow, PERSONAL_PRIORITY)];
        assert_eq!(effect_of(&situation("note_write", &args), &shared, &personal), Deny);
    }

    #[test]
    fn the_lowest_priority_number_wins() {
        let args = json!({});
        let shared = [rule("note_*", Require, 100), rule("note_write", Allow, 10)];
        assert_eq!(effect_of(&situation("note_write", &args), &shared, &[]), Allow);
    }

    #[test]
    fn ties_go_to_require() {
        let args = json!({});
        let shared = [rule("note_write", Allow, 10), rule("note_*", Require, 10)];
        assert_eq!(effect_of(&situation("note_write", &args), &shared, &[]), Require);
    }

    #[test]
    fn a_personal_always_allow_skips_the_card() {
        let args = json!({ "title": "x" });
        let personal = [rule("note_write", Allow, PERSONAL_PRIORITY)];
        let decision = decide(&situation("note_write", &args), &presets(), &personal);
        assert_eq!(decision.effect, Allow);
        assert!(decision.reason.contains("you chose"));
    }

    #[test]
    fn outside_content_makes_always_allow_ask_again_for_side_effects() {
        let args = json!({ "title": "x" });
        let personal = [rule("note_write", Allow, PERSONAL_PRIORITY), rule("note_read", Allow, PERSONAL_PRIORITY)];
        let mut tainted = situation("note_write", &args);
        tainted.outside_content = true;
        assert_eq!(effect_of(&tainted, &presets(), &personal), Require);
        let mut read = situation("note_read", &args);
        read.outside_content = true;
        assert_eq!(effect_of(&read, &presets(), &personal), Allow, "reads have no side effect");
    }

    #[test]
    fn outside_content_suspends_a_shared_allow_of_a_side_effect_too() {
        let args = json!({ "title": "Your account is locked", "body": "log in at evil.example" });
        let mut shared = vec![rule("notify", Allow, 100), rule("current_time", Allow, 100)];
        shared.extend(presets());
        assert_eq!(effect_of(&situation("notify", &args), &shared, &[]), Allow);
        let mut tainted = situation("notify", &args);
        tainted.outside_content = true;
        assert_eq!(effect_of(&tainted, &shared, &[]), Require, "a page's words may have asked for it");
        let mut reading = situation("current_time", &args);
        (reading.outside_content, reading.side_effects) = (true, false);
        assert_eq!(effect_of(&reading, &shared, &[]), Allow, "what has no side effect still runs");
    }

    #[test]
    fn a_role_that_may_not_approve_gets_deny_instead_of_a_card() {
        let args = json!({});
        let mut restricted = situation("note_write", &args);
        restricted.may_approve = false;
        let personal = [rule("note_write", Allow, PERSONAL_PRIORITY)];
        let decision = decide(&restricted, &presets(), &personal);
        assert_eq!(decision.effect, Deny, "their own always-allow does not count either");
        assert!(decision.reason.contains("may not approve"));
        assert_eq!(effect_of(&situation("note_read", &args), &presets(), &[]), Allow);
    }

    fn fields(pairs: &[(&str, &str)]) -> Option<ArgsPattern> {
        Some(ArgsPattern::Fields(pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()))
    }

    #[test]
    fn an_argument_pattern_covers_only_the_calls_it_matches() {
        let shared = [Rule { args: fields(&[("/url", "https://example.org/*")]), ..rule("web_fetch", Allow, 10) }];
        let fine = json!({ "url": "https://example.org/page" });
        let changed = json!({ "url": "https://evil.example/page" });
        assert_eq!(effect_of(&situation("web_fetch", &fine), &shared, &[]), Allow);
        assert_eq!(effect_of(&situation("web_fetch", &changed), &shared, &[]), Require);
    }

    #[test]
    fn a_decoy_field_holding_the_allowed_text_allows_nothing() {
        let shared = [Rule { args: fields(&[("/url", "https://example.org/*")]), ..rule("web_fetch", Allow, 10) }];
        let decoy = json!({ "x": { "url": "https://example.org/page" }, "url": "https://evil.example/" });
        assert_eq!(effect_of(&situation("web_fetch", &decoy), &shared, &[]), Require);
        let missing = json!({ "x": { "url": "https://example.org/page" } });
        assert_eq!(effect_of(&situation("web_fetch", &missing), &shared, &[]), Require);
        // A rule written over the text, as before pointers, no longer allows at all…
        let text = [Rule {
            args: Some(ArgsPattern::Text(r#"*"url":"https://example.org/*"#.into())),
            ..rule("web_fetch", Allow, 10)
        }];
        assert_eq!(effect_of(&situation("web_fetch", &decoy), &text, &[]), Require);
        // …but still refuses what it names.
        let deny = [Rule { args: Some(ArgsPattern::Text("*evil*".into())), ..rule("web_fetch", Deny, 10) }];
        assert_eq!(effect_of(&situation("web_fetch", &decoy), &deny, &[]), Deny);
    }

    #[test]
    fn every_spelling_of_a_denied_address_is_denied_and_of_an_allowed_one_allowed() {
        let deny = [
            Rule { args: fields(&[("/url", "https://bank.example/*")]), ..rule("web_fetch", Deny, 10) },
            rule("web_fetch", Allow, 100),
        ];
        for spelling in [
            "https://bank.example/login",
            "HTTPS://BANK.example/login",
            "https://bank.example/./login",
            "https://bank.example/x/../login",
            "https://bank.example/%6cogin",
            "https://bank.example/%2e/login",
            "https://bank.example:443/login",
        ] {
            let args = json!({ "url": spelling });
            assert_eq!(effect_of(&situation("web_fetch", &args), &deny, &[]), Deny, "{spelling}");
        }
        let allow = [Rule { args: fields(&[("/url", "HTTPS://Example.org/docs/*")]), ..rule("web_fetch", Allow, 10) }];
        for spelling in [
            "https://example.org/docs/a",
            "HTTP://example.org/docs/a".replace("HTTP", "HTTPS").as_str(),
            "https://EXAMPLE.org/docs/./%61",
        ] {
            let args = json!({ "url": spelling });
            assert_eq!(effect_of(&situation("web_fetch", &args), &allow, &[]), Allow, "{spelling}");
        }
        let escaped = json!({ "url": "https://example.org/docs/../admin" });
        assert_eq!(effect_of(&situation("web_fetch", &escaped), &allow, &[]), Require);
    }

    #[test]
    fn a_stored_condition_reads_back_as_it_was_written() {
        let map = fields(&[("/options/path", "/notes/*")]).unwrap();
        assert_eq!(ArgsPattern::from_stored(map.to_stored()), map);
        let text = ArgsPattern::Text(r#"{"path":"/notes/*"}"#.into());
        assert_eq!(ArgsPattern::from_stored(text.to_stored()), text, "keys that are no pointers stay text");
    }

    /// Found by fuzzing: `{"F/url": …}` came in as a field map that never matched, and read
    /// back from storage as a text pattern that might. JSON is now read as storage is.
    #[test]
    fn a_condition_from_json_means_what_it_will_mean_once_stored() {
        for json in [
            json!({ "F/url": "https://example.org/*" }),
            json!({ "/url": "https://example.org/*", "path": "x" }),
            json!({}),
            json!(r#"{"/url":"https://example.org/*"}"#),
            json!("*evil*"),
            json!({ "/url": "https://example.org/*" }),
        ] {
            let read: ArgsPattern = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(ArgsPattern::from_stored(read.to_stored()), read, "{json}");
        }
        let odd: ArgsPattern = serde_json::from_value(json!({ "F/url": "https://example.org/*" })).unwrap();
        assert!(matches!(odd, ArgsPattern::Text(_)), "{odd:?}");
        let map: ArgsPattern = serde_json::from_value(json!({ "/url": "https://example.org/*" })).unwrap();
        assert_eq!(map, fields(&[("/url", "https://example.org/*")]).unwrap());
    }

    #[test]
    fn a_persons_own_deny_counts_even_where_their_allows_do_not() {
        let args = json!({});
        let shared = [rule("note_write", Allow, 100)];
        let personal = [rule("note_write", Deny, 1)];
        let mut tainted = situation("note_write", &args);
        tainted.outside_content = true;
        assert_eq!(effect_of(&tainted, &shared, &personal), Deny);
    }

    #[test]
    fn a_personal_rule_is_never_weighed_before_the_personal_priority() {
        let args = json!({});
        let shared = [rule("note_write", Require, 10)];
        let personal = [rule("note_write", Allow, 0)];
        assert_eq!(effect_of(&situation("note_write", &args), &shared, &personal), Require);
    }

    #[test]
    fn argument_patterns_compare_case() {
        let shared = [Rule { args: fields(&[("/path", "/notes/*")]), ..rule("note_read", Allow, 10) }];
        assert_eq!(effect_of(&situation("note_read", &json!({ "path": "/notes/a" })), &shared, &[]), Allow);
        assert_eq!(effect_of(&situation("note_read", &json!({ "path": "/NOTES/a" })), &shared, &[]), Require);
    }

    #[test]
    fn a_rule_for_one_role_leaves_the_others_alone() {
        let args = json!({});
        let shared = [Rule { role: Some("admin".into()), ..rule("note_write", Allow, 10) }];
        assert_eq!(effect_of(&situation("note_write", &args), &shared, &[]), Require);
        let admin = Situation { role: "admin", ..situation("note_write", &args) };
        assert_eq!(effect_of(&admin, &shared, &[]), Allow);
    }

    #[test]
    fn an_approval_allows_exactly_the_arguments_the_card_showed() {
        let shown = json!({ "title": "Shopping", "text": "eggs" });
        let hash = arguments_hash("note_write", &shown);
        let same_in_another_order: Value = serde_json::from_str(r#"{"text":"eggs","title":"Shopping"}"#).unwrap();
        let approved = Situation { approved: Some(&hash), ..situation("note_write", &same_in_another_order) };
        assert_eq!(effect_of(&approved, &presets(), &[]), Allow);
    }

    #[test]
    fn changed_argument_needs_new_decision() {
        let shown = json!({ "title": "Shopping", "text": "eggs" });
        let hash = arguments_hash("note_write", &shown);
        let changed = json!({ "title": "Shopping", "text": "eggs and the door code" });
        let situation = Situation { approved: Some(&hash), ..situation("note_write", &changed) };
        assert_eq!(effect_of(&situation, &presets(), &[]), Require);
    }

    #[test]
    fn an_approval_for_one_tool_does_not_cover_another() {
        let args = json!({ "id": 3 });
        let hash = arguments_hash("note_read", &args);
        let situation = Situation { approved: Some(&hash), ..situation("note_delete", &args) };
        assert_eq!(effect_of(&situation, &presets(), &[]), Require);
    }

    #[test]
    fn a_confirmed_write_runs_once_the_person_approved_it() {
        let args = json!({ "text": "likes tea" });
        let hash = arguments_hash("remember", &args);
        let approved = Situation { approved: Some(&hash), ..situation("remember", &args) };
        assert_eq!(effect_of(&approved, &presets(), &[]), Allow);
    }

    #[test]
    fn deny_beats_an_approval_given_before_the_rule_changed() {
        let args = json!({ "title": "x" });
        let hash = arguments_hash("note_write", &args);
        let approved = Situation { approved: Some(&hash), ..situation("note_write", &args) };
        assert_eq!(effect_of(&approved, &[rule("note_write", Deny, 500)], &[]), Deny);
    }

    #[test]
    fn the_hash_ignores_key_order_at_every_depth_but_not_array_order() {
        let nested: Value = serde_json::from_str(r#"{"b":{"y":1,"x":[{"q":1,"p":2}]},"a":"s"}"#).unwrap();
        let reordered: Value = serde_json::from_str(r#"{"a":"s","b":{"x":[{"p":2,"q":1}],"y":1}}"#).unwrap();
        assert_eq!(arguments_hash("t", &nested), arguments_hash("t", &reordered));
        let swapped = json!({ "a": "s", "b": { "x": [1, 2], "y": 1 } });
        let other = json!({ "a": "s", "b": { "x": [2, 1], "y": 1 } });
        assert_ne!(arguments_hash("t", &swapped), arguments_hash("t", &other));
        assert_ne!(arguments_hash("t", &json!({ "a": "1" })), arguments_hash("t", &json!({ "a": 1 })));
    }
}
