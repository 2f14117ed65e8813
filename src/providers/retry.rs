//! What a failed provider request deserves (§9): a bad key is never retried; a rate limit
//! waits as long as the provider asked, within reason; an outage is retried a few times
//! with growing pauses. Bounded in every case, so a turn never hangs. Pure.

use std::time::Duration;

use super::ProviderError;

#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first pause after an outage; each later one doubles.
    pub base: Duration,
    /// The longest pause Skald accepts; a provider asking for more gets a clear error.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { max_retries: 3, base: Duration::from_millis(250), max_wait: Duration::from_secs(20) }
    }
}

impl RetryPolicy {
    /// How long to wait before retry number `retries_done + 1`, or `None` to give up.
    pub fn next_wait(&self, retries_done: u32, error: &ProviderError) -> Option<Duration> {
        if retries_done >= self.max_retries {
            return None;
        }
        let backoff = self.base.saturating_mul(1 << retries_done.min(16));
        let wait = match error {
            ProviderError::RateLimited { retry_after, .. } | ProviderError::Unavailable { retry_after, .. } => {
                retry_after.unwrap_or(backoff)
            }
            ProviderError::Stalled(_) => backoff,
            ProviderError::Auth { .. }
            | ProviderError::Rejected { .. }
            | ProviderError::Protocol(_)
            | ProviderError::Withheld(_)
            | ProviderError::Local(_)
            | ProviderError::LocalCrashed(_) => return None,
        };
        (wait <= self.max_wait).then_some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy { max_retries: 3, base: Duration::from_millis(100), max_wait: Duration::from_secs(10) }
    }

    #[test]
    fn a_refused_key_or_a_rejected_request_is_never_retried() {
        let auth = ProviderError::Auth { status: 401, message: String::new() };
        let rejected = ProviderError::Rejected { status: 400, message: String::new() };
        assert_eq!(policy().next_wait(0, &auth), None);
        assert_eq!(policy().next_wait(0, &rejected), None);
    }

    #[test]
    fn an_outage_is_retried_with_doubling_pauses_then_given_up() {
        let down = ProviderError::Unavailable { status: None, retry_after: None, message: String::new() };
        let waits: Vec<_> = (0..4).map(|n| policy().next_wait(n, &down)).collect();
        assert_eq!(
            waits,
            [
                Some(Duration::from_millis(100)),
                Some(Duration::from_millis(200)),
                Some(Duration::from_millis(400)),
                None
            ]
        );
    }

    #[test]
    fn an_overloaded_provider_is_waited_for_as_it_asks() {
        let busy = ProviderError::Unavailable {
            status: Some(529),
            retry_after: Some(Duration::from_secs(3)),
            message: String::new(),
        };
        assert_eq!(policy().next_wait(0, &busy), Some(Duration::from_secs(3)));
    }

    #[test]
    fn a_rate_limit_waits_as_asked_unless_that_is_too_long() {
        let asked =
            |s| ProviderError::RateLimited { retry_after: Some(Duration::from_secs(s)), message: String::new() };
        assert_eq!(policy().next_wait(0, &asked(2)), Some(Duration::from_secs(2)));
        assert_eq!(policy().next_wait(0, &asked(60)), None);
        let unsaid = ProviderError::RateLimited { retry_after: None, message: String::new() };
        assert_eq!(policy().next_wait(1, &unsaid), Some(Duration::from_millis(200)));
    }
}
