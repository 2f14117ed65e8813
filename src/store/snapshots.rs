//! What a conversation's next turn starts from — the conversation, its latest summary and
//! its history — kept in memory between turns, so that a turn's start need not read the
//! person's file (every read there stands between their message and the first token).
//!
//! A kept snapshot is served only while nothing it holds can have changed. Two counts
//! decide that: every commit on the file, counted by a commit hook on each connection of
//! every pool open on it (each window a person has open has its own pool; all of them
//! share one `Snapshots`), and the writes the store's own functions account for, each
//! naming what it touched ([`Touched`]) through a [`Writing`] held across the write. A
//! snapshot stays good while every commit since it was read is accounted for and none
//! touched its conversation; a commit nobody accounted for makes every snapshot stale, so
//! code that forgets to account for a write costs a read, not a stale turn. A read that
//! begins while a write is under way is not kept at all, and nothing is served while one
//! is under way: that write may be committed and not yet accounted for. A write during
//! which the file saw no commit is not counted (it failed, or was given up), so it cannot
//! stand in for a commit nobody accounted for. What is left is one narrow case — a write to a conversation's
//! rows never accounted for, landing while that conversation is read — hence the rule:
//! every write to `chat_sessions`, `turns`, `messages` or `summaries` goes through a
//! store function that accounts for it (`store::chat`, `store::approvals`).
//!
//! A write to a conversation drops its snapshot, unless the write only carried the
//! conversation on — a turn begun or ended at the end of its path, rows appended to it —
//! and says how ([`Writing::follows`]): the snapshot then follows it in memory, so a
//! conversation's turns do not each read back what the turn before wrote (in a long one,
//! up to a whole context window of rows). It follows only a write that began after the
//! snapshot was kept (a read may have seen what a write under way committed) and that is
//! the one commit since the snapshot was read not accounted for before it: then the
//! snapshot and the write together are what the file holds.
//!
//! Snapshots live with the open file and are dropped with its last pool when the person's
//! windows lock; they hold what the process holds during a turn anyway, never anything on
//! disk.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Weak};
use std::sync::{Mutex, PoisonError};

use super::conversation::{Conversation, Message, Summary};

/// How much history the snapshots of one person may hold, in bytes of text.
const MAX_BYTES: usize = 8 << 20;
/// How many conversations' snapshots one person may have kept.
const MAX_KEPT: usize = 512;
/// How many conversations' latest writes are remembered before they are forgotten at
/// once (every read under way is then not kept).
const MAX_WRITTEN: usize = 4096;

/// A conversation as a turn starts from it.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub conversation: Conversation,
    pub summary: Option<Summary>,
    /// The rows of the active path after `summary` (all of them without one), oldest first:
    /// a row the summary stands in for is read only when a turn asks for it.
    pub history: Vec<Message>,
}

/// What a write the store makes touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touched {
    /// One conversation's rows.
    Conversation(String),
    /// No conversation's rows (notes, settings, request records, cards).
    Nothing,
    /// Some conversation's rows, not known which.
    Unknown,
}

impl Touched {
    pub fn conversation(id: &str) -> Self {
        Self::Conversation(id.to_owned())
    }

    /// The rows of the conversations `ids` name (one per row written): one conversation's
    /// when they all name the same, none when there are none, else unknown.
    pub fn conversations<'a>(ids: impl IntoIterator<Item = &'a str>) -> Self {
        let mut ids = ids.into_iter();
        match ids.next() {
            None => Self::Nothing,
            Some(first) if ids.all(|id| id == first) => Self::conversation(first),
            Some(_) => Self::Unknown,
        }
    }
}

/// The counts when a read began: what it read is as new as this, or newer.
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    commits: u64,
    accounted: u64,
    /// No write was under way: what is read may be kept.
    keepable: bool,
}

impl Stamp {
    /// Whether every commit on the file since this stamp (`commits` of them now) was
    /// accounted for (`accounted` writes now).
    fn all_accounted(&self, commits: u64, accounted: u64) -> bool {
        commits.wrapping_sub(self.commits) == accounted.wrapping_sub(self.accounted)
    }
}

/// A write under way: held from before it begins until after it has committed (or
/// failed, or was given up), and accounted for when dropped — also when the future
/// making the write is dropped part-way, as when a client hangs up.
#[must_use = "a write is accounted for when this is dropped, after the write"]
pub struct Writing {
    snapshots: Arc<Snapshots>,
    touched: Touched,
    /// The file's commit count when the write began: unchanged at its end, it committed
    /// nothing (it failed, or was given up).
    commits_before: u64,
    /// Which write this is, in the order they began.
    number: u64,
    follow: Option<Follow>,
}

/// How a kept snapshot follows a write that carried its conversation on; false when it
/// cannot (the write did more than it can follow), and the snapshot is then dropped.
type Follow = Box<dyn FnOnce(&mut Snapshot) -> bool + Send>;

impl Writing {
    /// Names what the write touched, once it is known (a row it returned).
    pub fn touched(&mut self, touched: Touched) {
        self.touched = touched;
    }

    /// Says, once the write has committed, how its conversation's kept snapshot follows
    /// it (see the module's notes). Said before the commit, a write that then failed
    /// would put rows the file does not hold into the snapshot.
    pub fn follows(&mut self, follow: impl FnOnce(&mut Snapshot) -> bool + Send + 'static) {
        self.follow = Some(Box::new(follow));
    }
}

impl Drop for Writing {
    fn drop(&mut self) {
        let committed = self.snapshots.commits.load(Ordering::SeqCst) != self.commits_before;
        let touched = std::mem::replace(&mut self.touched, Touched::Nothing);
        self.snapshots.wrote(touched, committed, self.number, self.follow.take());
    }
}

/// The `Snapshots` of each private file open in this process: every pool on one file
/// shares them, whichever window opened it.
static OPEN_FILES: LazyLock<Mutex<HashMap<PathBuf, Weak<Snapshots>>>> = LazyLock::new(Mutex::default);

/// The snapshots of one open private file.
#[derive(Debug, Default)]
pub struct Snapshots {
    /// Every commit on the file; the commit hooks add to it.
    commits: Arc<AtomicU64>,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Writes the store's functions accounted for.
    accounted: u64,
    /// Writes under way, not yet accounted for.
    writing: u64,
    /// Writes begun.
    begun: u64,
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
    /// How many writes had begun when it was kept: a write among them may have committed
    /// before the read, so it is never followed.
    begun: u64,
    bytes: usize,
    snapshot: Arc<Snapshot>,
}

impl Snapshots {
    /// The snapshots of the file at `path`, shared with every other pool open on it.
    pub fn of_file(path: &Path) -> Arc<Self> {
        // By its folder's real path: the file itself may not exist yet (it is being made).
        let key = match (path.parent().map(Path::canonicalize), path.file_name()) {
            (Some(Ok(folder)), Some(name)) => folder.join(name),
            _ => path.to_path_buf(),
        };
        let mut open = OPEN_FILES.lock().unwrap_or_else(PoisonError::into_inner);
        open.retain(|_, snapshots| snapshots.strong_count() > 0);
        if let Some(shared) = open.get(&key).and_then(Weak::upgrade) {
            return shared;
        }
        let snapshots = Arc::new(Self::default());
        open.insert(key, Arc::downgrade(&snapshots));
        snapshots
    }

    /// A write about to begin; accounted for when the result is dropped.
    pub fn writing(self: &Arc<Self>, touched: Touched) -> Writing {
        let mut inner = self.lock();
        inner.writing += 1;
        inner.begun += 1;
        let number = inner.begun;
        let commits_before = self.commits.load(Ordering::SeqCst);
        drop(inner);
        Writing { snapshots: Arc::clone(self), touched, commits_before, number, follow: None }
    }

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
        Stamp { commits: self.commits.load(Ordering::SeqCst), accounted: inner.accounted, keepable: inner.writing == 0 }
    }

    /// The kept snapshot of conversation `id`, if nothing in it can have changed. None
    /// while a write is under way: it may have committed and not be accounted for yet.
    pub fn get(&self, id: &str) -> Option<Arc<Snapshot>> {
        let mut inner = self.lock();
        if inner.writing > 0 {
            return None;
        }
        let commits = self.commits.load(Ordering::SeqCst);
        let at = inner.kept.iter().position(|k| k.id == id)?;
        let kept = inner.kept.remove(at)?;
        if !kept.stamp.all_accounted(commits, inner.accounted) {
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
        let bytes = size_of(&snapshot);
        let mut inner = self.lock();
        let written = inner.written.get(id).copied().unwrap_or(0).max(inner.written_unknown);
        if !stamp.keepable || written > stamp.accounted {
            return;
        }
        inner.forget(id);
        let begun = inner.begun;
        inner.keep(Kept { id: id.to_owned(), stamp, begun, bytes, snapshot });
    }

    /// Accounts for one write the store made (see [`Snapshots::writing`]). A write during
    /// which the file saw no commit at all committed nothing: it is not counted, or it
    /// would stand in for a commit nobody accounted for. A write to a conversation drops
    /// its snapshot, unless the snapshot can follow it.
    fn wrote(&self, touched: Touched, committed: bool, number: u64, follow: Option<Follow>) {
        let mut inner = self.lock();
        let commits = self.commits.load(Ordering::SeqCst);
        inner.writing = inner.writing.saturating_sub(1);
        if committed {
            inner.accounted += 1;
        }
        let now = inner.accounted;
        match touched {
            Touched::Conversation(id) => {
                let followed = match follow {
                    Some(follow) if committed => inner.follow(&id, commits, number, follow),
                    _ => false,
                };
                if !followed {
                    inner.forget(&id);
                }
                if inner.written.len() >= MAX_WRITTEN {
                    inner.written.clear();
                    inner.written_unknown = now;
                }
                inner.written.insert(id, now);
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
    /// Keeps a snapshot as the most recently used, the least recently used giving way to
    /// the caps; one too big to keep at all is not kept, and drops nothing. Whether it was
    /// kept.
    fn keep(&mut self, kept: Kept) -> bool {
        if kept.bytes > MAX_BYTES {
            return false;
        }
        while self.kept.len() >= MAX_KEPT || self.bytes + kept.bytes > MAX_BYTES {
            let Some(oldest) = self.kept.pop_front() else { break };
            self.bytes -= oldest.bytes;
        }
        self.bytes += kept.bytes;
        self.kept.push_back(kept);
        true
    }

    /// Carries the kept snapshot of conversation `id` on with write `number`, just accounted
    /// for, when that write began after the snapshot was kept (so its read cannot have seen
    /// it) and every commit since the read (`commits` of them now) is accounted for: the
    /// write is then the only one to it that the snapshot does not hold. Whether it did;
    /// if not, it is no longer kept.
    fn follow(&mut self, id: &str, commits: u64, number: u64, follow: Follow) -> bool {
        let Some(at) = self.kept.iter().position(|k| k.id == id) else { return false };
        let Some(mut kept) = self.kept.remove(at) else { return false };
        self.bytes -= kept.bytes;
        // A turn under way may hold the snapshot: it keeps what it started from.
        if number <= kept.begun
            || !kept.stamp.all_accounted(commits, self.accounted)
            || !follow(Arc::make_mut(&mut kept.snapshot))
        {
            return false;
        }
        kept.bytes = size_of(&kept.snapshot);
        self.keep(kept)
    }

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
    use crate::store::conversation::{MessageRole, MessageStatus};

    fn snapshot(title: &str, rows: usize, text: &str) -> Arc<Snapshot> {
        let conversation = Conversation {
            id: "chat_a".into(),
            agent: "main".into(),
            model: None,
            title: title.into(),
            created_at: String::new(),
            updated_at: String::new(),
            turn_state: None,
            active_turn: None,
            outside_content: false,
            pinned: false,
            archived: false,
            temporary: false,
        };
        let message = Message {
            id: 1,
            turn_id: "turn_1".into(),
            role: MessageRole::User,
            text: text.into(),
            status: MessageStatus::Sent,
            tool_calls: None,
            tool_call_id: None,
            tool_name: None,
            model: None,
            error_code: None,
            error_message: None,
            created_at: String::new(),
            frame_id: None,
            redacted: false,
            images: None,
        };
        Arc::new(Snapshot { conversation, summary: None, history: vec![message; rows] })
    }

    /// A write as the store makes it: announced, committed (the hook counts it), then
    /// accounted for; `None` for a commit the store never heard of.
    fn commit(snapshots: &Arc<Snapshots>, touched: Option<Touched>) {
        let writing = touched.map(|t| snapshots.writing(t));
        snapshots.commits.fetch_add(1, Ordering::SeqCst);
        drop(writing);
    }

    fn fresh() -> Arc<Snapshots> {
        Arc::new(Snapshots::default())
    }

    #[test]
    fn rows_name_one_conversation_or_none_or_an_unknown_one() {
        assert_eq!(Touched::conversations([]), Touched::Nothing);
        assert_eq!(Touched::conversations(["a", "a"]), Touched::conversation("a"));
        assert_eq!(Touched::conversations(["a", "b"]), Touched::Unknown);
    }

    #[test]
    fn a_snapshot_outlives_writes_to_other_conversations_only() {
        let snapshots = fresh();
        snapshots.put("chat_a", snapshots.stamp(), snapshot("a", 1, "hi"));
        commit(&snapshots, Some(Touched::conversation("chat_b")));
        commit(&snapshots, Some(Touched::Nothing));
        assert_eq!(snapshots.get("chat_a").unwrap().conversation.title, "a");
        commit(&snapshots, Some(Touched::conversation("chat_a")));
        assert!(snapshots.get("chat_a").is_none());
    }

    #[test]
    fn a_commit_nobody_accounted_for_makes_every_snapshot_stale() {
        let snapshots = fresh();
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
        let snapshots = fresh();
        let stamp = snapshots.stamp();
        // The write lands while the read runs; the read may or may not have seen it.
        commit(&snapshots, Some(Touched::conversation("chat_a")));
        snapshots.put("chat_a", stamp, snapshot("old", 1, "hi"));
        assert!(snapshots.get("chat_a").is_none());
        // A write to some unknown conversation during the read: not kept either.
        let stamp = snapshots.stamp();
        commit(&snapshots, Some(Touched::Unknown));
        snapshots.put("chat_b", stamp, snapshot("old", 1, "hi"));
        assert!(snapshots.get("chat_b").is_none());
    }

    #[test]
    fn a_read_begun_during_a_write_is_not_kept() {
        let snapshots = fresh();
        // Committed (the hook counted it) but not yet accounted for: a read now cannot
        // tell which conversation it touched.
        let writing = snapshots.writing(Touched::conversation("chat_b"));
        snapshots.commits.fetch_add(1, Ordering::SeqCst);
        let stamp = snapshots.stamp();
        drop(writing);
        snapshots.put("chat_a", stamp, snapshot("a", 1, "hi"));
        assert!(snapshots.get("chat_a").is_none());
        // A write given up (its future dropped) is still accounted for.
        snapshots.put("chat_a", snapshots.stamp(), snapshot("a", 1, "hi"));
        let writing = snapshots.writing(Touched::conversation("chat_a"));
        snapshots.commits.fetch_add(1, Ordering::SeqCst);
        drop(writing);
        assert!(snapshots.get("chat_a").is_none(), "its conversation's snapshot went with it");
    }

    #[test]
    fn every_pool_on_one_file_shares_its_snapshots() {
        let dir = tempfile::tempdir().unwrap();
        let (one, other) = (dir.path().join("one.db"), dir.path().join("other.db"));
        let first = Snapshots::of_file(&one);
        assert!(Arc::ptr_eq(&first, &Snapshots::of_file(&one)));
        let roundabout = dir.path().join(".").join("one.db");
        assert!(Arc::ptr_eq(&first, &Snapshots::of_file(&roundabout)), "one file, however it is named");
        assert!(!Arc::ptr_eq(&first, &Snapshots::of_file(&other)));
        first.put("chat_a", first.stamp(), snapshot("a", 1, "hi"));
        drop(first);
        assert!(Snapshots::of_file(&one).get("chat_a").is_none(), "gone with its last pool");
    }

    #[test]
    fn the_least_recently_used_give_way_to_the_size_cap() {
        let snapshots = fresh();
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

    #[test]
    fn a_failed_write_does_not_hide_a_write_committed_and_not_yet_accounted_for() {
        // The interleaving the property below found: a snapshot kept; a write to another
        // conversation fails (no commit); a commit of notes nobody accounts for; a write to
        // the snapshot's conversation commits and is not accounted for yet.
        let snapshots = fresh();
        let stamp = snapshots.stamp();
        snapshots.put("chat_a", stamp, snapshot("before", 1, "x"));
        drop(snapshots.writing(Touched::conversation("chat_b")));
        snapshots.commits.fetch_add(1, Ordering::SeqCst);
        let in_flight = snapshots.writing(Touched::conversation("chat_a"));
        snapshots.commits.fetch_add(1, Ordering::SeqCst);
        assert!(snapshots.get("chat_a").is_none(), "served while its write was under way");
        drop(in_flight);
        assert!(snapshots.get("chat_a").is_none(), "served after its conversation was written");
    }

    #[test]
    fn a_write_that_a_kept_read_may_have_seen_is_not_followed() {
        // The interleaving the property below found: a read begins, a write begins and
        // commits, the read sees what it committed and is kept; then the write ends.
        // Followed, the snapshot would hold that write twice.
        let snapshots = fresh();
        let stamp = snapshots.stamp();
        let mut writing = snapshots.writing(Touched::conversation("chat_a"));
        snapshots.commits.fetch_add(1, Ordering::SeqCst);
        writing.follows(|s| (s.conversation.title.push_str("1;"), true).1);
        snapshots.put("chat_a", stamp, snapshot("1;", 1, "x"));
        drop(writing);
        assert!(snapshots.get("chat_a").is_none(), "followed a write it held");
    }

    #[test]
    fn writes_that_end_in_another_order_than_they_committed_are_not_followed() {
        // Two turns' rows committed one after the other; the later write is accounted for
        // first. Followed then, the snapshot would hold the rows in the wrong order.
        let snapshots = fresh();
        snapshots.put("chat_a", snapshots.stamp(), snapshot("", 1, "x"));
        let mut first = snapshots.writing(Touched::conversation("chat_a"));
        let mut second = snapshots.writing(Touched::conversation("chat_a"));
        snapshots.commits.fetch_add(1, Ordering::SeqCst);
        first.follows(|s| (s.conversation.title.push_str("1;"), true).1);
        snapshots.commits.fetch_add(1, Ordering::SeqCst);
        second.follows(|s| (s.conversation.title.push_str("2;"), true).1);
        drop(second);
        drop(first);
        assert!(snapshots.get("chat_a").is_none(), "followed out of order");
        // One at a time, each is followed.
        snapshots.put("chat_a", snapshots.stamp(), snapshot("", 1, "x"));
        for n in ["1;", "2;"] {
            let mut writing = snapshots.writing(Touched::conversation("chat_a"));
            snapshots.commits.fetch_add(1, Ordering::SeqCst);
            writing.follows(move |s| (s.conversation.title.push_str(n), true).1);
        }
        assert_eq!(snapshots.get("chat_a").unwrap().conversation.title, "1;2;");
    }

    /// Random interleavings of reads and writes (issue 31): whatever the order, a served
    /// snapshot holds what the file holds now. Writes to conversations go through
    /// [`Snapshots::writing`] (the module's rule); other commits may go unaccounted. A
    /// write to a named conversation may say, once committed, how its snapshot follows it,
    /// or that it cannot. A conversation reads as the writes committed to it, in order, so
    /// a snapshot that follows writes in another order than the file's is stale too.
    mod properties {
        use proptest::prelude::*;

        use super::*;

        const CONVERSATIONS: [&str; 3] = ["chat_a", "chat_b", "chat_c"];

        #[derive(Debug, Clone)]
        enum Step {
            /// A read of a conversation begins (its stamp is taken).
            ReadBegins(usize),
            /// The oldest read under way reads the file.
            ReadReads,
            /// The oldest read under way keeps what it read.
            ReadKeeps,
            /// A write begins, to `conversation` or to another table.
            WriteBegins { conversation: usize, kind: Kind },
            /// The oldest write under way commits.
            WriteCommits,
            /// A write under way is over (committed, failed or given up): writes that began
            /// in one order may end in another.
            WriteEnds(usize),
            /// A commit nobody accounted for, to something other than conversations.
            Unaccounted,
            /// A turn starts from a kept snapshot, if one is served.
            Served(usize),
        }

        /// What a write touches, as it says.
        #[derive(Debug, Clone, Copy, PartialEq)]
        enum Kind {
            /// Another table than the conversations'.
            Elsewhere,
            /// A conversation, not saying which.
            Unknown,
            /// The conversation it names, its snapshot dropped.
            Named,
            /// The conversation it names, saying once committed how its snapshot follows
            /// (or, false, that it cannot).
            Followed(bool),
        }

        fn step() -> impl Strategy<Value = Step> {
            prop_oneof![
                (0..3usize).prop_map(Step::ReadBegins),
                Just(Step::ReadReads),
                Just(Step::ReadKeeps),
                (0..3usize, kind()).prop_map(|(conversation, kind)| Step::WriteBegins { conversation, kind }),
                Just(Step::WriteCommits),
                (0..4usize).prop_map(Step::WriteEnds),
                Just(Step::Unaccounted),
                (0..3usize).prop_map(Step::Served),
            ]
        }

        fn kind() -> impl Strategy<Value = Kind> {
            prop_oneof![
                1 => Just(Kind::Elsewhere),
                1 => Just(Kind::Unknown),
                1 => Just(Kind::Named),
                3 => Just(Kind::Followed(true)),
                1 => Just(Kind::Followed(false)),
            ]
        }

        struct Read {
            conversation: usize,
            stamp: Stamp,
            seen: Option<String>,
        }

        struct Write {
            writing: Writing,
            conversation: usize,
            kind: Kind,
            committed: bool,
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

            #[test]
            fn a_served_snapshot_is_never_stale(steps in proptest::collection::vec(step(), 1..80)) {
                let snapshots = fresh();
                // Each conversation in the file: the writes committed to it, in order.
                let mut file: [String; 3] = Default::default();
                let mut numbered = 0u32;
                let mut reads: VecDeque<Read> = VecDeque::new();
                let mut writes: VecDeque<Write> = VecDeque::new();
                for step in steps {
                    match step {
                        Step::ReadBegins(conversation) => {
                            reads.push_back(Read { conversation, stamp: snapshots.stamp(), seen: None });
                        }
                        Step::ReadReads => {
                            if let Some(read) = reads.iter_mut().find(|r| r.seen.is_none()) {
                                read.seen = Some(file[read.conversation].clone());
                            }
                        }
                        Step::ReadKeeps => {
                            if reads.front().is_some_and(|r| r.seen.is_some())
                                && let Some(read) = reads.pop_front()
                            {
                                let seen = read.seen.unwrap_or_default();
                                snapshots.put(CONVERSATIONS[read.conversation], read.stamp, snapshot(&seen, 1, "x"));
                            }
                        }
                        Step::WriteBegins { conversation, kind } => {
                            let touched = match kind {
                                Kind::Elsewhere => Touched::Nothing,
                                Kind::Unknown => Touched::Unknown,
                                Kind::Named | Kind::Followed(_) => Touched::conversation(CONVERSATIONS[conversation]),
                            };
                            let writing = snapshots.writing(touched);
                            writes.push_back(Write { writing, conversation, kind, committed: false });
                        }
                        Step::WriteCommits => {
                            if let Some(write) = writes.iter_mut().find(|w| !w.committed) {
                                write.committed = true;
                                snapshots.commits.fetch_add(1, Ordering::SeqCst);
                                numbered += 1;
                                let this = format!("{numbered};");
                                if write.kind != Kind::Elsewhere {
                                    file[write.conversation].push_str(&this);
                                }
                                // Said once committed, as the store's functions do: the
                                // snapshot, if it follows, takes this write on at its end.
                                if let Kind::Followed(can) = write.kind {
                                    write.writing.follows(move |snapshot| {
                                        snapshot.conversation.title.push_str(&this);
                                        can
                                    });
                                }
                            }
                        }
                        Step::WriteEnds(which) => {
                            if !writes.is_empty()
                                && let Some(write) = writes.remove(which % writes.len())
                            {
                                drop(write.writing);
                            }
                        }
                        Step::Unaccounted => {
                            snapshots.commits.fetch_add(1, Ordering::SeqCst);
                        }
                        Step::Served(conversation) => {
                            if let Some(served) = snapshots.get(CONVERSATIONS[conversation]) {
                                prop_assert_eq!(
                                    served.conversation.title.clone(),
                                    file[conversation].clone(),
                                    "a stale snapshot of {} was served",
                                    CONVERSATIONS[conversation]
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
