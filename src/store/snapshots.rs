//! What a conversation's next turn starts from — the conversation, its latest summary and
//! its history — kept in memory between turns, so that a turn's start need not read the
//! person's file (every read there stands between their message and the first token).
//!
//! A kept snapshot is served only while nothing it holds can have changed. Two counts
//! decide that: every commit on the file, counted by a commit hook on each connection of
//! its pool (it sees every write, whoever makes it), and the commits the store's own
//! functions account for when they write, each naming what it touched ([`Touched`]). A
//! snapshot stays good while every commit since it was read is accounted for and none
//! touched its conversation; a commit nobody accounted for makes every snapshot stale.
//! So code that forgets to account for a write costs only a read, never a stale turn —
//! except in one narrow case: a write to a conversation's rows that is never accounted for
//! and lands while that conversation is being read. Hence the rule: every write to
//! `chat_sessions`, `turns`, `messages` or `summaries` goes through a store function that
//! accounts for it (`store::chat`, `store::approvals`).
//!
//! Snapshots live with the open file and are dropped with it when the space locks; they
//! hold what the process holds during a turn anyway, never anything on disk.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use super::chat::{ChatSession, Message, Summary};

/// How much history the snapshots of one person may hold, in bytes of text.
const MAX_BYTES: usize = 8 << 20;
/// How many conversations' snapshots one person may have kept.
const MAX_KEPT: usize = 512;

/// A conversation as a turn starts from it.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub conversation: ChatSession,
    pub summary: Option<Summary>,
    pub history: Vec<Message>,
}

/// What a commit the store made touched.
#[derive(Debug, Clone, Copy)]
pub enum Touched<'a> {
    /// One conversation's rows.
    Conversation(&'a str),
    /// No conversation's rows (notes, settings, request records, cards).
    Nothing,
    /// Some conversation's rows, not known which.
    Unknown,
}

/// The counts when a read began: what it read is as new as this, or newer.
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    commits: u64,
    accounted: u64,
}

/// The snapshots of one open private file.
#[derive(Debug, Default)]
pub struct Snapshots {
    /// Every commit on the file; the commit hooks add to it.
    commits: Arc<AtomicU64>,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Commits the store's functions accounted for.
    accounted: u64,
    /// Per conversation, `accounted` just after its latest write.
    written: HashMap<String, u64>,
    /// `accounted` just after the latest write to an unknown conversation.
    written_unknown: u64,
    /// Least recently used first.
    kept: VecDeque<Kept>,
    bytes: usize,
    #[cfg(test)]
    served: u64,
}

#[derive(Debug)]
struct Kept {
    id: String,
    stamp: Stamp,
    bytes: usize,
    snapshot: Arc<Snapshot>,
}

impl Snapshots {
    /// The counter each connection's commit hook adds to.
    pub fn commit_counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.commits)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Taken before a read whose result may be kept.
    pub fn stamp(&self) -> Stamp {
        let inner = self.lock();
        Stamp { commits: self.commits.load(Ordering::SeqCst), accounted: inner.accounted }
    }

    /// The kept snapshot of conversation `id`, if nothing in it can have changed.
    pub fn get(&self, id: &str) -> Option<Arc<Snapshot>> {
        let commits = self.commits.load(Ordering::SeqCst);
        let mut inner = self.lock();
        let at = inner.kept.iter().position(|k| k.id == id)?;
        let kept = inner.kept.remove(at)?;
        let unchanged = commits - kept.stamp.commits == inner.accounted - kept.stamp.accounted;
        if !unchanged {
            inner.bytes -= kept.bytes;
            return None;
        }
        let snapshot = Arc::clone(&kept.snapshot);
        inner.kept.push_back(kept);
        #[cfg(test)]
        {
            inner.served += 1;
        }
        Some(snapshot)
    }

    /// Keeps what was read of conversation `id` since `stamp` — unless a write to it was
    /// accounted for since, in which case the read may have missed it.
    pub fn put(&self, id: &str, stamp: Stamp, snapshot: Arc<Snapshot>) {
        let mut inner = self.lock();
        let written = inner.written.get(id).copied().unwrap_or(0).max(inner.written_unknown);
        if written > stamp.accounted {
            return;
        }
        inner.forget(id);
        let bytes = size_of(&snapshot);
        if bytes > MAX_BYTES {
            return;
        }
        while inner.kept.len() >= MAX_KEPT || inner.bytes + bytes > MAX_BYTES {
            let Some(oldest) = inner.kept.pop_front() else { break };
            inner.bytes -= oldest.bytes;
        }
        inner.bytes += bytes;
        inner.kept.push_back(Kept { id: id.to_owned(), stamp, bytes, snapshot });
    }

    /// Accounts for one commit the store just made.
    pub fn wrote(&self, touched: Touched<'_>) {
        let mut inner = self.lock();
        inner.accounted += 1;
        let now = inner.accounted;
        match touched {
            Touched::Conversation(id) => {
                inner.written.insert(id.to_owned(), now);
                inner.forget(id);
            }
            Touched::Nothing => {}
            Touched::Unknown => {
                inner.written_unknown = now;
                inner.kept.clear();
                inner.bytes = 0;
            }
        }
    }

    /// How many times a kept snapshot was served (tests).
    #[cfg(test)]
    pub fn served(&self) -> u64 {
        self.lock().served
    }
}

impl Inner {
    fn forget(&mut self, id: &str) {
        if let Some(at) = self.kept.iter().position(|k| k.id == id)
            && let Some(gone) = self.kept.remove(at)
        {
            self.bytes -= gone.bytes;
        }
    }
}

/// About what a snapshot holds in memory: its text and a row's worth for each row.
fn size_of(snapshot: &Snapshot) -> usize {
    let rows: usize = snapshot
        .history
        .iter()
        .map(|m| 256 + m.text.len() + m.tool_calls.as_ref().map_or(0, |c| c.to_string().len()))
        .sum();
    256 + rows + snapshot.summary.as_ref().map_or(0, |s| s.text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(title: &str, rows: usize, text: &str) -> Arc<Snapshot> {
        let conversation = ChatSession {
            id: "chat_a".into(),
            agent: "main".into(),
            model: None,
            title: title.into(),
            created_at: String::new(),
            updated_at: String::new(),
            turn_state: None,
            outside_content: false,
        };
        let message = Message {
            id: 1,
            turn_id: "turn_1".into(),
            role: "user".into(),
            text: text.into(),
            status: "sent".into(),
            tool_calls: None,
            tool_call_id: None,
            tool_name: None,
            model: None,
            error_code: None,
            error_message: None,
            created_at: String::new(),
            frame_id: None,
        };
        Arc::new(Snapshot { conversation, summary: None, history: vec![message; rows] })
    }

    /// A commit as a hook sees it, then as the store accounts for it.
    fn commit(snapshots: &Snapshots, touched: Option<Touched<'_>>) {
        snapshots.commits.fetch_add(1, Ordering::SeqCst);
        if let Some(touched) = touched {
            snapshots.wrote(touched);
        }
    }

    #[test]
    fn a_snapshot_outlives_writes_to_other_conversations_only() {
        let snapshots = Snapshots::default();
        snapshots.put("chat_a", snapshots.stamp(), snapshot("a", 1, "hi"));
        commit(&snapshots, Some(Touched::Conversation("chat_b")));
        commit(&snapshots, Some(Touched::Nothing));
        assert_eq!(snapshots.get("chat_a").unwrap().conversation.title, "a");
        commit(&snapshots, Some(Touched::Conversation("chat_a")));
        assert!(snapshots.get("chat_a").is_none());
    }

    #[test]
    fn a_commit_nobody_accounted_for_makes_every_snapshot_stale() {
        let snapshots = Snapshots::default();
        snapshots.put("chat_a", snapshots.stamp(), snapshot("a", 1, "hi"));
        snapshots.put("chat_b", snapshots.stamp(), snapshot("b", 1, "hi"));
        commit(&snapshots, None);
        assert!(snapshots.get("chat_a").is_none());
        assert!(snapshots.get("chat_b").is_none());
        // Read again afterwards, it is good again.
        snapshots.put("chat_a", snapshots.stamp(), snapshot("a", 1, "hi"));
        assert!(snapshots.get("chat_a").is_some());
    }

    #[test]
    fn a_read_that_a_write_overtook_is_not_kept() {
        let snapshots = Snapshots::default();
        let stamp = snapshots.stamp();
        // The write lands while the read runs; the read may or may not have seen it.
        commit(&snapshots, Some(Touched::Conversation("chat_a")));
        snapshots.put("chat_a", stamp, snapshot("old", 1, "hi"));
        assert!(snapshots.get("chat_a").is_none());
        // A write the hook counted but the store has not yet accounted for: the read
        // is kept, and the accounting that follows drops it.
        let stamp = snapshots.stamp();
        snapshots.commits.fetch_add(1, Ordering::SeqCst);
        snapshots.put("chat_a", stamp, snapshot("old", 1, "hi"));
        snapshots.wrote(Touched::Conversation("chat_a"));
        assert!(snapshots.get("chat_a").is_none());
        // A write to some unknown conversation during the read: not kept either.
        let stamp = snapshots.stamp();
        commit(&snapshots, Some(Touched::Unknown));
        snapshots.put("chat_b", stamp, snapshot("old", 1, "hi"));
        assert!(snapshots.get("chat_b").is_none());
    }

    #[test]
    fn the_least_recently_used_give_way_to_the_size_cap() {
        let snapshots = Snapshots::default();
        let big = "x".repeat(3 << 20);
        snapshots.put("chat_a", snapshots.stamp(), snapshot("a", 1, &big));
        snapshots.put("chat_b", snapshots.stamp(), snapshot("b", 1, &big));
        assert!(snapshots.get("chat_a").is_some(), "a is now the most recently used");
        snapshots.put("chat_c", snapshots.stamp(), snapshot("c", 1, &big));
        assert!(snapshots.get("chat_b").is_none(), "b went first");
        assert!(snapshots.get("chat_a").is_some() && snapshots.get("chat_c").is_some());
        // One too big to keep at all is not kept, and drops nothing.
        snapshots.put("chat_d", snapshots.stamp(), snapshot("d", 1, &"x".repeat(MAX_BYTES)));
        assert!(snapshots.get("chat_d").is_none());
        assert!(snapshots.get("chat_a").is_some());
        assert!(snapshots.lock().bytes <= MAX_BYTES);
    }
}
