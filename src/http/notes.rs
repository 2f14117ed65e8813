//! The caller's notes (§12), in their own encrypted file: the same notes the assistant
//! keeps with `note_write` (behind its cards), read, written and deleted by their owner.

use axum::Json;
use axum::extract::{Path, Query};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::auth::Caller;
use super::error::{ApiError, Subject};
use super::json::Body;
use crate::store::notes::{self, Hit, Note, NoteSummary};

#[derive(Deserialize)]
pub struct Search {
    q: Option<String>,
}

/// How many hits a search returns.
const HITS: u32 = 50;

/// `GET /api/notes`: the notes, or with `q` the hits, each a list.
#[derive(Serialize, ts_rs::TS)]
#[serde(untagged)]
pub enum NoteList {
    Hits(Vec<Hit>),
    Notes(Vec<NoteSummary>),
}

/// `GET /api/notes[?q=words]`: my notes, newest first; with `q`, the ones matching it.
pub async fn list(caller: Caller, Query(search): Query<Search>) -> Result<Json<NoteList>, ApiError> {
    let space = &caller.session.space;
    match search.q.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
        Some(query) => Ok(Json(NoteList::Hits(notes::search(space, query, HITS).await?))),
        None => Ok(Json(NoteList::Notes(notes::list(space).await?))),
    }
}

/// `GET /api/notes/{id}`: one note, whole.
pub async fn get(caller: Caller, Path(id): Path<i64>) -> Result<Json<Note>, ApiError> {
    let note = notes::get(&caller.session.space, id).await?;
    note.map(Json).ok_or_else(ApiError::no_note)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewNote {
    title: String,
    #[serde(default)]
    body: String,
}

/// `POST /api/notes` `{"title","body"}`: a note I write myself (no card: it is my own hand).
pub async fn create(caller: Caller, Body(req): Body<NewNote>) -> Result<(StatusCode, Json<Note>), ApiError> {
    let note = notes::create(&caller.session.space, req.title.trim(), &req.body, false)
        .await
        .map_err(ApiError::about(Subject::Note))?;
    Ok((StatusCode::CREATED, Json(note)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteEdit {
    title: Option<String>,
    body: Option<String>,
}

/// `PUT /api/notes/{id}` `{"title"?,"body"?}`: edits one of my notes.
pub async fn update(caller: Caller, Path(id): Path<i64>, Body(req): Body<NoteEdit>) -> Result<Json<Note>, ApiError> {
    let title = req.title.as_deref().map(str::trim);
    let note = notes::update(&caller.session.space, id, title, req.body.as_deref(), false)
        .await
        .map_err(ApiError::about(Subject::Note))?;
    Ok(Json(note))
}

/// `DELETE /api/notes/{id}`: deletes one of my notes; its words leave the search index too.
pub async fn delete(caller: Caller, Path(id): Path<i64>) -> Result<StatusCode, ApiError> {
    notes::delete(&caller.session.space, id).await.map_err(ApiError::about(Subject::Note))?;
    Ok(StatusCode::NO_CONTENT)
}
