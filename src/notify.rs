//! Desktop notifications: features post a [`Notification`] here and whoever shows them —
//! the desktop shell, as OS notifications — subscribes. The core never shows anything
//! itself, and notifications are never logged or stored: they may carry private words.

use tokio::sync::broadcast;

/// One notification, as the OS will show it.
#[derive(Clone)]
pub struct Notification {
    pub title: String,
    pub body: String,
    /// The job it comes from, so the shell can offer snooze and open the right place.
    pub job: Option<FromJob>,
}

impl Notification {
    /// A notification about nothing in particular (the `notify` tool's).
    pub fn plain(title: impl Into<String>, body: impl Into<String>) -> Self {
        Self { title: title.into(), body: body.into(), job: None }
    }
}

/// What a job's notification is about. Ids only (as text: this module sits below the
/// typed ids), never words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FromJob {
    /// The job's id (`job_…`).
    pub id: String,
    /// A reminder can be snoozed from its notification; a task's report cannot.
    pub snooze: bool,
    /// Where a click goes: the task's conversation (`chat_…`), or (none) the Reminders page.
    pub conversation: Option<String>,
}

/// The channel between features and the shell; cheap to clone.
#[derive(Clone)]
pub struct Notifier {
    sender: broadcast::Sender<Notification>,
}

impl Default for Notifier {
    fn default() -> Self {
        // A few pending notifications at most; a shell that lags drops the oldest.
        Self { sender: broadcast::channel(32).0 }
    }
}

impl Notifier {
    /// Posts a notification; returns whether anyone is listening to show it.
    pub fn post(&self, notification: Notification) -> bool {
        self.sender.send(notification).is_ok()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Notification> {
        self.sender.subscribe()
    }
}
