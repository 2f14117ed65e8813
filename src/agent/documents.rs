//! Keeping and reading documents (docs/architecture.md §12.2): an upload is told apart by
//! its bytes, refused in words when it is not something Skald keeps, found again when the
//! same bytes are already in that pool, and otherwise kept at once as `reading`; its text is
//! read afterwards, one document at a time, by the extraction helper, and written beside it.
//! Reading interrupted by a lock or a restart starts again when its owner unlocks.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use crate::extract::{Extracted, Extractor, Failure, Kind, Refused};
use crate::ids::{DocumentId, UserId};
use crate::store::StoreError;
use crate::store::documents::{Document, NewDocument, Pool, Shelf, Status};
use crate::store::private::PrivateStore;
use crate::store::system::SystemStore;
use crate::users::sessions::Session;

/// The largest document kept, in bytes (64 MiB).
pub const MAX_BYTES: usize = 64 << 20;

/// Why an upload was not kept, in words for the person who sent it.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("the file is larger than 64 MiB, the largest document Skald keeps")]
    TooLarge,
    #[error("{0}")]
    Refused(Refused),
    #[error("this file is already here, as \"{}\"", .0.name)]
    Duplicate(Box<Document>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Documents of every pool, and the one reader working through them; cheap to clone.
#[derive(Clone)]
pub struct Documents {
    inner: Arc<Inner>,
}

struct Inner {
    extractor: Extractor,
    system: SystemStore,
    /// One document is read at a time: the helper may use a core and gigabytes.
    turn: Semaphore,
    /// Documents being read or waiting to be, so that no unlock starts one twice.
    queued: Mutex<HashSet<DocumentId>>,
}

impl Documents {
    pub fn new(system: SystemStore, extractor: Extractor) -> Self {
        let inner = Inner { extractor, system, turn: Semaphore::new(1), queued: Mutex::default() };
        Self { inner: Arc::new(inner) }
    }

    /// Keeps `bytes` named `name` in `pool` for the person of `session`, and starts reading
    /// it. `local_only` when their role keeps their words on this machine.
    pub async fn upload(
        &self,
        session: &Arc<Session>,
        pool: Pool,
        name: &str,
        bytes: &[u8],
        local_only: bool,
    ) -> Result<Document, UploadError> {
        if bytes.len() > MAX_BYTES {
            return Err(UploadError::TooLarge);
        }
        let kind = crate::extract::sniff(bytes, name).map_err(UploadError::Refused)?;
        let sha256 = hex::encode(Sha256::digest(bytes));
        let shelf = self.shelf(pool, &session.space);
        let new = NewDocument {
            name,
            kind,
            bytes,
            sha256: &sha256,
            uploaded_by: (pool == Pool::Shared).then_some(&session.user_id),
            local_only: pool == Pool::Shared && local_only,
        };
        let document = match shelf.create(&new).await {
            Ok(document) => document,
            // These bytes are kept already (sent before, or twice at once).
            Err(StoreError::Exists) => {
                let kept = shelf.find(&sha256).await?.ok_or(StoreError::NotFound)?;
                return Err(UploadError::Duplicate(Box::new(kept)));
            }
            Err(err) => return Err(err.into()),
        };
        self.read_later(session, pool, document.id.clone());
        Ok(document)
    }

    /// At unlock: documents of this person's, and of the shared pool, whose reading a lock
    /// or a restart cut short are read again.
    pub async fn resume(&self, session: &Arc<Session>) -> Result<usize, StoreError> {
        let mut started = 0;
        for pool in [Pool::Private, Pool::Shared] {
            for document in self.shelf(pool, &session.space).reading().await? {
                if self.read_later(session, pool, document.id) {
                    started += 1;
                }
            }
        }
        Ok(started)
    }

    /// The pool `pool` as seen from `space`.
    pub fn shelf<'a>(&'a self, pool: Pool, space: &'a PrivateStore) -> Shelf<'a> {
        match pool {
            Pool::Private => Shelf::Own(space),
            Pool::Shared => Shelf::Shared(&self.inner.system),
        }
    }

    /// Document `id` wherever `space`'s person may read it: their own first, then shared.
    pub async fn find<'a>(
        &'a self,
        space: &'a PrivateStore,
        id: &DocumentId,
    ) -> Result<Option<(Shelf<'a>, Document)>, StoreError> {
        for pool in [Pool::Private, Pool::Shared] {
            let shelf = self.shelf(pool, space);
            if let Some(document) = shelf.get(id).await? {
                return Ok(Some((shelf, document)));
            }
        }
        Ok(None)
    }

    /// Queues `id` for reading as work of `session` (so that a lock waits for it or stops
    /// it); false when it is queued already or the session has ended.
    fn read_later(&self, session: &Arc<Session>, pool: Pool, id: DocumentId) -> bool {
        if !self.inner.queued.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id.clone()) {
            return false;
        }
        let (this, held) = (self.clone(), session.clone());
        let forget = id.clone();
        let spawned = session.spawn(async move {
            tokio::select! {
                () = held.ended().cancelled() => {}
                () = this.read(&held.space, &held.user_id, pool, &id) => {}
            }
            this.unqueue(&id);
        });
        if !spawned {
            self.unqueue(&forget);
        }
        spawned
    }

    fn unqueue(&self, id: &DocumentId) {
        self.inner.queued.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(id);
    }

    /// Reads document `id` and records its text and status.
    async fn read(&self, space: &PrivateStore, owner: &UserId, pool: Pool, id: &DocumentId) {
        let Ok(_turn) = self.inner.turn.acquire().await else { return };
        let shelf = self.shelf(pool, space);
        let document = match shelf.get(id).await {
            Ok(Some(document)) if document.status == Status::Reading => document,
            Ok(_) => return,
            Err(err) => {
                tracing::warn!(user = %owner, %err, "could not look up a document to read");
                return;
            }
        };
        let bytes = match shelf.bytes(id).await {
            Ok(bytes) => bytes,
            Err(err) => {
                tracing::warn!(user = %owner, %err, "could not load a document to read");
                return;
            }
        };
        let read = self.inner.extractor.extract(document.kind, &bytes).await;
        drop(bytes);
        let (pages, status, detail) = outcome(document.kind, read);
        match shelf.finish(id, &pages, status, detail.as_deref()).await {
            // Deleted while it was read: nothing to record.
            Ok(()) | Err(StoreError::NotFound) => {}
            Err(err) => tracing::warn!(user = %owner, %err, "could not record a document's text"),
        }
    }
}

/// What reading a document of `kind` came to: its pages, its status, and why, in words.
fn outcome(kind: Kind, read: Result<Extracted, Failure>) -> (Vec<String>, Status, Option<String>) {
    match read {
        Ok(extracted) if extracted.has_text() => {
            let detail = extracted.ocr_missing.then(|| {
                "Some pages are scanned images; Skald could not read them because OCR (tesseract) is not installed."
                    .to_owned()
            });
            (extracted.pages, Status::Ready, detail)
        }
        Ok(extracted) => {
            let why = if extracted.ocr_missing {
                "Its pages are images, and OCR (tesseract) is not installed to read them; an administrator can install it."
            } else if kind.is_image() {
                "The picture holds no text Skald could read."
            } else {
                "The file holds no text."
            };
            (Vec::new(), Status::NoText, Some(why.to_owned()))
        }
        Err(failure) => (Vec::new(), Status::Failed, Some(failure.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_with_words_is_ready_and_one_without_says_why() {
        let (pages, status, detail) = outcome(Kind::Pdf, Ok(Extracted::new(vec!["Rent is due".into()])));
        assert_eq!((pages.len(), status, detail), (1, Status::Ready, None));

        let scanned = Extracted { pages: vec![String::new()], ocr_missing: true, ocr_used: false };
        let (pages, status, detail) = outcome(Kind::Pdf, Ok(scanned));
        assert_eq!((pages.len(), status), (0, Status::NoText));
        assert!(detail.unwrap().contains("OCR (tesseract) is not installed"));

        let (_, status, detail) = outcome(Kind::Png, Ok(Extracted::new(vec![" ".into()])));
        assert_eq!(status, Status::NoText);
        assert!(detail.unwrap().contains("picture"));

        let (_, status, detail) = outcome(Kind::Xlsx, Err(Failure::TooBig));
        assert_eq!(status, Status::Failed);
        assert!(detail.unwrap().contains("more memory"));
    }
}
