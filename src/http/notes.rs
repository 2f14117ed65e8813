//! The caller's notes (§12), read from their own encrypted file: the same notes the
//! assistant keeps with `note_write`. Writing stays the assistant's, behind its cards.

use axum::Json;
use axum::extract::{Path, Query};
use serde::Deserialize;

use super::auth::Caller;
use super::error::ApiError;
use crate::store::notes::{self, Hit, Note, NoteSummary};

#[derive(Deserialize)]
pub struct Search {
    q: Option<String>,
}

/// How many hits a search returns.
const HITS: u32 = 50;

/// `GET /api/notes[?q=words]`: my notes, newest first; with `q`, the ones matching it.
pub async fn list(caller: Caller, Query(search): Query<Search>) -> Result<Json<serde_json::Value>, ApiError> {
    let space = &caller.session.space;
    match search.q.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
        Some(query) => {
            let hits: Vec<Hit> = notes::search(space, query, HITS).await?;
            Ok(Json(serde_json::to_value(hits).expect("hits serialize")))
        }
        None => {
            let all: Vec<NoteSummary> = notes::list(space).await?;
            Ok(Json(serde_json::to_value(all).expect("notes serialize")))
        }
    }
}

/// `GET /api/notes/{id}`: one note, whole.
pub async fn get(caller: Caller, Path(id): Path<i64>) -> Result<Json<Note>, ApiError> {
    let note = notes::get(&caller.session.space, id).await?;
    note.map(Json).ok_or_else(|| ApiError::Missing { code: "no_note", message: "there is no such note".into() })
}
