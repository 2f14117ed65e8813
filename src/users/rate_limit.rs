//! Failed-attempt limits per person and per kind of secret (§7): a few free tries, then a
//! wait that doubles with each further failure, up to a cap. Unknown names are limited
//! exactly like known ones, so the limiter reveals nothing. In memory: a restart resets
//! it, which costs an attacker a restart per handful of guesses of an argon2 target.
//!
//! An attempt counts as a failure from the moment it begins, before its key derivation
//! runs, and only a success takes it back: N guesses sent at once cost N attempts, so no
//! more than the free few are ever evaluated together.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failures allowed before any wait.
const FREE_FAILURES: u32 = 5;
const MAX_WAIT: Duration = Duration::from_secs(15 * 60);

#[derive(Default)]
pub struct RateLimiter {
    // A std Mutex: held for a map lookup only, never across an await.
    entries: Mutex<HashMap<String, Entry>>,
}

#[derive(Clone, Copy)]
struct Entry {
    failures: u32,
    blocked_until: Option<Instant>,
}

/// The wait after `failures` consecutive failures. Pure.
pub fn wait_after(failures: u32) -> Duration {
    if failures < FREE_FAILURES {
        return Duration::ZERO;
    }
    let doublings = (failures - FREE_FAILURES).min(20);
    Duration::from_secs(1u64 << doublings).min(MAX_WAIT)
}

/// A wait in whole seconds as a sentence says it: "1 second", "2 seconds" (never "0"). Pure.
pub fn in_seconds(wait: Duration) -> String {
    match wait.as_secs().max(1) {
        1 => "1 second".to_owned(),
        n => format!("{n} seconds"),
    }
}

impl RateLimiter {
    /// Begins an attempt for `key`, counted as a failure until [`Self::succeeded`] says
    /// otherwise; `Err(retry_after)` while `key` must wait. The check and the count are
    /// one step under the lock.
    pub fn attempt(&self, key: &str) -> Result<(), Duration> {
        let mut entries = self.entries.lock().expect("rate limiter lock");
        let entry = entries.entry(key.to_owned()).or_insert(Entry { failures: 0, blocked_until: None });
        let now = Instant::now();
        if let Some(until) = entry.blocked_until.filter(|until| *until > now) {
            return Err(until - now);
        }
        entry.failures = entry.failures.saturating_add(1);
        let wait = wait_after(entry.failures);
        entry.blocked_until = (!wait.is_zero()).then(|| now + wait);
        Ok(())
    }

    /// The attempt for `key` succeeded: the count starts again.
    pub fn succeeded(&self, key: &str) {
        self.entries.lock().expect("rate limiter lock").remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failures_are_free_then_the_wait_doubles_up_to_a_cap() {
        assert_eq!(wait_after(4), Duration::ZERO);
        assert_eq!(wait_after(5), Duration::from_secs(1));
        assert_eq!(in_seconds(Duration::from_millis(300)), "1 second", "a wait under a second reads as one");
        assert_eq!(in_seconds(Duration::from_secs(2)), "2 seconds");
        assert_eq!(wait_after(6), Duration::from_secs(2));
        assert_eq!(wait_after(60), MAX_WAIT);
    }

    #[test]
    fn a_success_clears_the_count() {
        let limiter = RateLimiter::default();
        for _ in 0..5 {
            assert!(limiter.attempt("ada").is_ok());
        }
        assert!(limiter.attempt("ada").is_err());
        assert!(limiter.attempt("bob").is_ok());
        limiter.succeeded("ada");
        assert!(limiter.attempt("ada").is_ok());
    }

    #[test]
    fn attempts_begun_together_count_before_any_is_decided() {
        let limiter = RateLimiter::default();
        // Forty guesses arrive before the first key derivation ends.
        let let_through = (0..40).filter(|_| limiter.attempt("ada").is_ok()).count();
        assert_eq!(let_through, FREE_FAILURES as usize);
    }
}
