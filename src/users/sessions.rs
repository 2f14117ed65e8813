//! Unlocked sessions (§7): a bearer's digest maps to the person, their open private space
//! and their DEK. Ending a session — logout, lock, idle timeout, process exit — removes
//! it, cancels the work running on it (turns), waits briefly for that work to record how
//! it ended, then closes the space and drops the key, which zeroizes it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use zeroize::Zeroizing;

use crate::crypto::{self, Dek};
use crate::ids::UserId;
use crate::store::private::PrivateStore;

/// One unlocked session. Has no `Debug`: it holds a key.
pub struct Session {
    pub user_id: UserId,
    pub space: PrivateStore,
    /// Held for sealing key copies to supervisors (§6.2).
    dek: Dek,
    idle_timeout: Duration,
    /// The role's choice: closing the window locks this session (§1).
    lock_on_close: bool,
    last_active: Mutex<Instant>,
    /// Cancelled when the session ends; work started for this person watches it.
    ended: CancellationToken,
    /// Work running on this session's space; the space closes only once it has finished.
    work: TaskTracker,
    /// Live-event sockets open on this session, capped so one bearer cannot hold a
    /// connection per descriptor the process has.
    sockets: AtomicUsize,
}

/// How long ending a session waits for its running work to record how it ended.
const WORK_GRACE: Duration = Duration::from_secs(5);

impl Session {
    pub fn new(user_id: UserId, space: PrivateStore, dek: Dek, idle_timeout: Duration, lock_on_close: bool) -> Self {
        Self {
            user_id,
            space,
            dek,
            idle_timeout,
            lock_on_close,
            last_active: Mutex::new(Instant::now()),
            ended: CancellationToken::new(),
            work: TaskTracker::new(),
            sockets: AtomicUsize::new(0),
        }
    }

    /// Runs `task` as work of this session, unless the session has already ended. The
    /// task should watch [`Session::ended`] and finish promptly once it fires.
    pub fn spawn<F>(&self, task: F) -> bool
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if self.ended.is_cancelled() {
            return false;
        }
        self.work.spawn(task);
        true
    }

    /// A place for one more live-event socket, unless `max` are open already. The place is
    /// given back when the returned seat is dropped.
    pub fn seat_socket(self: &Arc<Self>, max: usize) -> Option<SocketSeat> {
        self.sockets.fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| (open < max).then_some(open + 1)).ok()?;
        Some(SocketSeat(Arc::clone(self)))
    }

    /// Fires when the session ends (logout, lock, idle, exit).
    /// The person's key, to seal a copy of it to a supervisor they accept (§6.2).
    pub(crate) fn dek(&self) -> &Dek {
        &self.dek
    }

    pub fn ended(&self) -> &CancellationToken {
        &self.ended
    }

    /// A session with running work — a streaming turn — is never idle (§8.1).
    fn idle_at(&self, now: Instant) -> bool {
        self.work.is_empty() && is_idle(*self.last_active.lock().expect("session clock"), now, self.idle_timeout)
    }

    /// Cancels the session's work, gives it a moment to record its end, then closes the
    /// space. Work that outlives the grace period finds the space closed and fails.
    async fn close(&self) {
        self.ended.cancel();
        self.work.close();
        if tokio::time::timeout(WORK_GRACE, self.work.wait()).await.is_err() {
            tracing::warn!(user = %self.user_id, "session work did not finish in time; closing the space anyway");
        }
        self.space.close().await;
    }

    fn touch(&self, now: Instant) {
        *self.last_active.lock().expect("session clock") = now;
    }

    /// Marks the session active now: work that just finished counts as use, so the idle
    /// clock starts from its end, not from the request that started it.
    pub fn touch_now(&self) {
        self.touch(Instant::now());
    }
}

/// One live-event socket's place on its session.
pub struct SocketSeat(Arc<Session>);

impl Drop for SocketSeat {
    fn drop(&mut self) {
        self.0.sockets.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether a session last used at `last_active` has gone idle by `now`. Pure.
pub fn is_idle(last_active: Instant, now: Instant, timeout: Duration) -> bool {
    now.saturating_duration_since(last_active) >= timeout
}

/// The registry of unlocked sessions; cheap to clone.
#[derive(Clone, Default)]
pub struct Sessions {
    // Keyed by the SHA-256 of the bearer, so lookups never compare the secret itself.
    map: Arc<Mutex<HashMap<[u8; 32], Arc<Session>>>>,
}

impl Sessions {
    /// Registers a session and returns its new bearer token.
    pub fn insert(&self, session: Session) -> Zeroizing<String> {
        let token = crypto::bearer_token();
        let digest = crypto::token_digest(token.as_bytes());
        self.map.lock().expect("sessions lock").insert(digest, Arc::new(session));
        token
    }

    /// The live session a bearer names, refreshed as active; an idle one is ended instead.
    pub async fn resolve(&self, token: &[u8]) -> Option<Arc<Session>> {
        let digest = crypto::token_digest(token);
        let now = Instant::now();
        let expired = {
            let mut map = self.map.lock().expect("sessions lock");
            let session = map.get(&digest)?.clone();
            if !session.idle_at(now) {
                session.touch(now);
                return Some(session);
            }
            map.remove(&digest)
        };
        if let Some(session) = expired {
            tracing::info!(user = %session.user_id, "session ended: idle");
            session.close().await;
        }
        None
    }

    /// Ends the session a bearer names; false if there was none.
    pub async fn end(&self, token: &[u8]) -> bool {
        let removed = self.map.lock().expect("sessions lock").remove(&crypto::token_digest(token));
        match removed {
            Some(session) => {
                session.close().await;
                true
            }
            None => false,
        }
    }

    /// Ends every session matching `which`; returns how many.
    async fn end_where(&self, which: impl Fn(&Session) -> bool) -> usize {
        self.end_where_keyed(|_, session| which(session)).await
    }

    /// The same, told each session's bearer digest too.
    async fn end_where_keyed(&self, which: impl Fn(&[u8; 32], &Session) -> bool) -> usize {
        let ended: Vec<Arc<Session>> = {
            let mut map = self.map.lock().expect("sessions lock");
            let keys: Vec<[u8; 32]> = map.iter().filter(|(k, s)| which(k, s)).map(|(k, _)| *k).collect();
            keys.iter().filter_map(|k| map.remove(k)).collect()
        };
        futures_util::future::join_all(ended.iter().map(|session| session.close())).await;
        ended.len()
    }

    /// One of a person's live sessions, if they are logged in: for work done on their
    /// behalf that reads their space (a reminder's words).
    pub fn of_user(&self, user_id: &UserId) -> Option<Arc<Session>> {
        self.map.lock().expect("sessions lock").values().find(|s| &s.user_id == user_id).cloned()
    }

    /// How many windows one person has open.
    pub fn count_user(&self, user_id: &UserId) -> usize {
        self.map.lock().expect("sessions lock").values().filter(|s| &s.user_id == user_id).count()
    }

    /// Locks every window of one person.
    pub async fn end_user(&self, user_id: &UserId) -> usize {
        self.end_where(|s| &s.user_id == user_id).await
    }

    /// Ends every session of one person but the one whose bearer is `keep`: after a
    /// password change or a recovery, a window opened with the old password (perhaps by
    /// someone who learned it) is shut.
    pub async fn end_user_except(&self, user_id: &UserId, keep: &[u8]) -> usize {
        let kept = crypto::token_digest(keep);
        self.end_where_keyed(|digest, s| &s.user_id == user_id && *digest != kept).await
    }

    /// Locks everyone (tray → Lock, process exit).
    pub async fn end_all(&self) -> usize {
        self.end_where(|_| true).await
    }

    /// The window was closed: locks the sessions whose role asks for it (on by default).
    pub async fn end_on_window_close(&self) -> usize {
        self.end_where(|s| s.lock_on_close).await
    }

    /// Ends sessions that went idle; run periodically so an unused key does not linger.
    pub async fn end_idle(&self) -> usize {
        let now = Instant::now();
        self.end_where(|s| s.idle_at(now)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_idle_once_the_timeout_has_passed_since_its_last_use() {
        let start = Instant::now();
        let timeout = Duration::from_secs(60);
        assert!(!is_idle(start, start + Duration::from_secs(59), timeout));
        assert!(is_idle(start, start + Duration::from_secs(60), timeout));
    }
}
