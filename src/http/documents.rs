//! Documents (§12, docs/architecture.md §12.2): the caller's own, in their encrypted file,
//! and the shared pool's. An upload's body is read up to the limit and no further; the
//! original is served back chunk by chunk with the type its bytes showed, `nosniff`, and
//! never into a cache (a webview's cache is a file in plain text).

use std::sync::Arc;

use axum::Json;
use axum::body::Body as RawBody;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde::Deserialize;

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use crate::agent::documents::{MAX_BYTES, UploadError};
use crate::agent::meaning::{Corpus, DocumentCorpus};
use crate::ids::DocumentId;
use crate::store::StoreError;
use crate::store::documents::{Document, Hit, PageText, Pool};
use crate::store::roles::PrivacyTier;
use crate::users::sessions::Session;

/// How many pages a search returns.
const HITS: u32 = 50;

/// `GET /api/documents`: mine and the shared pool's, newest first.
pub async fn list(State(state): State<AppState>, caller: Caller) -> Result<Json<Vec<Document>>, ApiError> {
    let space = &caller.session.space;
    let mut all = state.documents.shelf(Pool::Private, space).list().await?;
    all.extend(state.documents.shelf(Pool::Shared, space).list().await?);
    all.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.id.cmp(&a.id)));
    Ok(Json(all))
}

#[derive(Deserialize)]
pub struct SearchQuery {
    q: Option<String>,
    /// How to rank: `fused` (the default), `meaning` or `words` alone.
    by: Option<Ranking>,
}

/// A search's ranking: what the page uses, and the two it is made of, for comparing them.
#[derive(Deserialize, Clone, Copy, Default)]
#[serde(rename_all = "snake_case")]
enum Ranking {
    #[default]
    Fused,
    Meaning,
    Words,
}

/// `GET /api/documents/search?q=[&by=fused|meaning|words]`: pages of mine and the shared
/// pool's, best first, each with a snippet (the words marked): by meaning and by words
/// together (the default), or by either alone. Without an embedding model, by words.
pub async fn search(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<SearchQuery>,
) -> Result<Json<Vec<Hit>>, ApiError> {
    let Some(q) = query.q.as_deref().map(str::trim).filter(|q| !q.is_empty()) else {
        return Ok(Json(Vec::new()));
    };
    let space = &caller.session.space;
    let corpus = DocumentCorpus {
        shelves: vec![state.documents.shelf(Pool::Private, space), state.documents.shelf(Pool::Shared, space)],
    };
    let meaning = state.agent.meaning();
    let limit = HITS as usize;
    let (hits, _) = match query.by.unwrap_or_default() {
        Ranking::Fused => meaning.fused(&corpus, q, limit).await?,
        Ranking::Meaning => meaning.search(&corpus, q, limit).await?,
        Ranking::Words => (corpus.by_words(q, limit).await?, crate::agent::meaning::By::Words),
    };
    Ok(Json(hits))
}

#[derive(Deserialize)]
pub struct UploadQuery {
    name: Option<String>,
    pool: Option<Pool>,
    /// What the same bytes already kept in that pool mean: refused (409, the default), or
    /// `use`, the kept document answered with 200 (attaching a file picked again).
    existing: Option<Existing>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Existing {
    Refuse,
    Use,
}

/// `POST /api/documents?name=&pool=&existing=`: the file's bytes as the body (any declared
/// type is ignored: the bytes say what it is). 201 with the document, still `reading`; for
/// bytes kept already in that pool, 409 `duplicate_document`, or with `existing=use` 200
/// with the kept one.
pub async fn upload(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<UploadQuery>,
    body: RawBody,
) -> Result<(StatusCode, Json<Document>), ApiError> {
    let bytes = read_body(body).await?;
    let role = state.agent.role_of(&caller.session.user_id).await?;
    let local_only = role.privacy_tier == PrivacyTier::LocalOnly;
    let pool = query.pool.unwrap_or(Pool::Private);
    let name = query.name.as_deref().unwrap_or("");
    match state.documents.upload(&caller.session, pool, name, &bytes, local_only).await {
        Ok(document) => Ok((StatusCode::CREATED, Json(document))),
        Err(UploadError::Duplicate(kept)) if query.existing == Some(Existing::Use) => Ok((StatusCode::OK, Json(*kept))),
        Err(err) => Err(err.into()),
    }
}

/// The body, up to [`MAX_BYTES`]. A larger one is refused with 413 once the sender has
/// finished sending (what arrives past the limit is read and dropped, up to a bound), so
/// that the answer reaches them instead of a reset connection.
async fn read_body(body: RawBody) -> Result<Vec<u8>, ApiError> {
    read_body_up_to(body, MAX_BYTES).await?.ok_or_else(|| UploadError::TooLarge.into())
}

/// The body, up to `max` bytes; `None` when it was longer (read to its end, up to four
/// times `max`, and dropped), for the caller to refuse with 413 in its own words.
pub(super) async fn read_body_up_to(body: RawBody, max: usize) -> Result<Option<Vec<u8>>, ApiError> {
    let drain_at_most = 4 * max;
    let mut stream = body.into_data_stream();
    let (mut bytes, mut seen) = (Vec::new(), 0_usize);
    while let Some(piece) = stream.next().await {
        let piece = piece.map_err(|err| ApiError::BadRequest {
            code: "upload_interrupted",
            message: format!("the upload broke off before it ended ({err}); nothing was kept — send it again"),
        })?;
        seen += piece.len();
        if seen > drain_at_most {
            break;
        }
        if seen <= max {
            bytes.extend_from_slice(&piece);
        } else if !bytes.is_empty() {
            bytes = Vec::new();
        }
    }
    Ok((seen <= max).then_some(bytes))
}

/// `GET /api/documents/{id}`: one document as it is now.
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<DocumentId>,
) -> Result<Json<Document>, ApiError> {
    let (_, document) = state.documents.find(&caller.session.space, &id).await?.ok_or_else(ApiError::no_document)?;
    Ok(Json(document))
}

#[derive(Deserialize)]
pub struct PageQuery {
    page: Option<i64>,
}

/// `GET /api/documents/{id}/text?page=`: the text read from one page (from 1).
pub async fn text(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<DocumentId>,
    Query(query): Query<PageQuery>,
) -> Result<Json<PageText>, ApiError> {
    let (shelf, document) =
        state.documents.find(&caller.session.space, &id).await?.ok_or_else(ApiError::no_document)?;
    let page = query.page.unwrap_or(1);
    match shelf.page(&id, page).await? {
        Some(text) => Ok(Json(text)),
        None if document.pages.is_none_or(|pages| pages == 0) => {
            Ok(Json(PageText { document: id, page, pages: 0, text: String::new() }))
        }
        None => Err(ApiError::Missing {
            code: "no_page",
            message: format!("this document has {} pages; ask for one from 1 to that", document.pages.unwrap_or(0)),
        }),
    }
}

/// `GET /api/documents/{id}/content`: the original bytes, streamed from the store.
pub async fn content(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<DocumentId>,
) -> Result<Response, ApiError> {
    let (shelf, document) =
        state.documents.find(&caller.session.space, &id).await?.ok_or_else(ApiError::no_document)?;
    let chunks = shelf.chunk_count(&id).await?;
    let pool = document.pool;
    let session: Arc<Session> = caller.session.clone();
    let stream = futures_util::stream::unfold(0_i64, move |seq| {
        let (state, session, id) = (state.clone(), session.clone(), id.clone());
        async move {
            if seq >= chunks {
                return None;
            }
            let chunk = state.documents.shelf(pool, &session.space).chunk(&id, seq).await;
            let chunk = match chunk {
                Ok(Some(bytes)) => Ok(axum::body::Bytes::from(bytes)),
                Ok(None) => Err(std::io::Error::other("the document was deleted while it was sent")),
                Err(err) => Err(std::io::Error::other(err.to_string())),
            };
            Some((chunk, seq + 1))
        }
    });
    let mut response = RawBody::from_stream(stream).into_response();
    let headers = response.headers_mut();
    let media_type = HeaderValue::from_str(&document.media_type).unwrap_or(HeaderValue::from_static("text/plain"));
    headers.insert(header::CONTENT_TYPE, media_type);
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(document.size));
    // `nosniff`, `no-store` and the page's CSP are stamped on every API answer by the
    // boundary (`boundary.rs`).
    headers.insert(header::CONTENT_DISPOSITION, HeaderValue::from_static("inline"));
    Ok(response)
}

/// `DELETE /api/documents/{id}`: one of mine; a shared one only by who shared it or an
/// administrator.
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<DocumentId>,
) -> Result<StatusCode, ApiError> {
    let (shelf, document) =
        state.documents.find(&caller.session.space, &id).await?.ok_or_else(ApiError::no_document)?;
    if document.pool == Pool::Shared && document.uploaded_by.as_ref() != Some(&caller.session.user_id) {
        let role = state.agent.role_of(&caller.session.user_id).await?;
        if !role.manage_instance {
            return Err(ApiError::Refused {
                code: "not_yours",
                message: "only who shared this document, or an administrator, may delete it".into(),
            });
        }
    }
    match shelf.delete(&id).await {
        Ok(()) | Err(StoreError::NotFound) => Ok(StatusCode::NO_CONTENT),
        Err(err) => Err(err.into()),
    }
}
