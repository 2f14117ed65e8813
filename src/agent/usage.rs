//! Daily usage caps (§6.1): a role may bound the model tokens a person uses per calendar
//! day. The day is this computer's local date; a debug build takes it from
//! `SKALD_TEST_TODAY` so tests can move the clock.

use crate::ids::UserId;
use crate::store::roles::Role;
use crate::store::{StoreError, SystemStore, usage};

/// Today, as `YYYY-MM-DD` in the local time zone.
pub fn today() -> String {
    if cfg!(debug_assertions)
        && let Ok(day) = std::env::var("SKALD_TEST_TODAY")
    {
        return day;
    }
    jiff::Zoned::now().date().to_string()
}

/// The first day of the 30 that end on `day`.
pub fn month_start(day: &str) -> String {
    day.parse::<jiff::civil::Date>()
        .ok()
        .and_then(|d| d.checked_sub(jiff::Span::new().days(29)).ok())
        .map_or_else(|| day.to_owned(), |d| d.to_string())
}

/// The cap and what was used today, when the person has reached their role's cap.
pub async fn over_cap(system: &SystemStore, role: &Role, user: &UserId) -> Result<Option<(i64, i64)>, StoreError> {
    let Some(cap) = role.usage_cap_tokens else { return Ok(None) };
    let used = usage::tokens_on(system, user, &today()).await?;
    Ok((used >= cap).then_some((cap, used)))
}

/// Tokens a text is likely to be, for providers that report no usage: about four
/// characters each.
pub fn estimate_tokens(chars: usize) -> i64 {
    i64::try_from(chars.div_ceil(4)).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_days_end_on_the_given_day() {
        assert_eq!(month_start("2026-12-01"), "2026-11-02");
        assert_eq!(month_start("2026-03-01"), "2026-01-31");
        assert_eq!(estimate_tokens(9), 3);
    }
}
