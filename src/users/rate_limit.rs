//! Failed-attempt limits per person and per kind of secret (§7): a few free tries, then a
//! wait that doubles with each further failure, up to a cap. Unknown names are limited
//! exactly like known ones, so the limiter reveals nothing. In memory: a restart resets
//! it, which costs an attacker a restart per handful of guesses of an argon2 target.

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

impl RateLimiter {
    /// `Err(retry_after)` while `key` must wait.
    pub fn check(&self, key: &str) -> Result<(), Duration> {
        let entries = self.entries.lock().expect("rate limiter lock");
        match entries.get(key).and_then(|e| e.blocked_until) {
            Some(until) => {
                let now = Instant::now();
                if until > now { Err(until - now) } else { Ok(()) }
            }
            None => Ok(()),
        }
    }

    pub fn failed(&self, key: &str) {
        let mut entries = self.entries.lock().expect("rate limiter lock");
        let entry = entries.entry(key.to_owned()).or_insert(Entry { failures: 0, blocked_until: None });
        entry.failures = entry.failures.saturating_add(1);
        let wait = wait_after(entry.failures);
        entry.blocked_until = (!wait.is_zero()).then(|| Instant::now() + wait);
    }

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
        assert_eq!(wait_after(6), Duration::from_secs(2));
        assert_eq!(wait_after(60), MAX_WAIT);
    }

    #[test]
    fn a_success_clears_the_count() {
        let limiter = RateLimiter::default();
        for _ in 0..5 {
            limiter.failed("ada");
        }
        assert!(limiter.check("ada").is_err());
        assert!(limiter.check("bob").is_ok());
        limiter.succeeded("ada");
        assert!(limiter.check("ada").is_ok());
    }
}
