//! The built-in provider's models (§9): administrators import GGUF files from disk, list
//! them with what the engine is doing, and delete them. An imported model is offered as
//! `local/<id>` to every role that allows it.

use std::path::PathBuf;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::auth::{AdminActor, Caller};
use super::error::ApiError;
use super::json::Body;
use crate::providers::local::{self, ImportError, LocalModels};
use crate::store::StoreError;
use crate::store::local_models::{self, LocalModel};
use crate::store::providers::Model;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportBody {
    /// An absolute path to a `.gguf` file on this computer.
    path: String,
    /// What people see it called; the file's own name for itself otherwise.
    name: Option<String>,
}

/// `POST /api/local-models` (administrators): checks the file, copies it into the data
/// directory and offers it. 201 `{"id","model"}`.
pub async fn import(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Body(req): Body<ImportBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let source = PathBuf::from(req.path.trim());
    if !source.is_absolute() {
        return Err(ApiError::BadRequest {
            code: "invalid_path",
            message: "give the model file's full path, starting at the root of the disk".to_owned(),
        });
    }
    let name = given_name(req.name.as_deref())?;
    let models = state.agent.local_models().clone();
    let staged = models.stage(source.clone()).await.map_err(import_error)?;
    let installed =
        install(&state, &actor, &caller.session, staged, name, format!("file:{}", source.display())).await?;
    Ok((StatusCode::CREATED, Json(installed)))
}

/// Offers a staged model: a fresh id from its name, its file moved into place, its row and
/// catalogue entry written. `{"id","model"}`.
pub(crate) async fn install(
    state: &AppState,
    actor: &crate::store::audit::Actor,
    by: &crate::users::sessions::Session,
    staged: local::Staged,
    name: Option<String>,
    source: String,
) -> Result<Value, ApiError> {
    let models = state.agent.local_models().clone();
    if let Some(existing) = local_models::by_sha256(&state.system, &staged.sha256).await? {
        return Err(ApiError::Conflict {
            code: "already_imported",
            message: format!("this model is already imported as {}", existing.id),
        });
    }
    let name = name.unwrap_or_else(|| staged.suggested_name.clone());
    let id = free_id(state, &local::slug(&name)).await?;
    let row = LocalModel {
        id: id.clone(),
        name,
        file_size: i64::try_from(staged.info.file_size).unwrap_or(i64::MAX),
        sha256: staged.sha256.clone(),
        architecture: staged.info.architecture.clone().unwrap_or_else(|| "unknown".to_owned()),
        parameters: staged.parameters.and_then(|n| i64::try_from(n).ok()),
        quantization: staged.info.file_type.map(quantization),
        context_length: i64::from(staged.context),
        source,
        imported_by: actor.name.clone(),
        imported_at: String::new(),
    };
    let model = Model {
        model_id: id.clone(),
        context_window: i64::from(staged.context),
        strength: local::strength(staged.parameters).to_owned(),
        tools: staged.info.template_takes_tools,
    };
    staged.install(&models, &id).map_err(|err| ApiError::Internal(Box::new(err)))?;
    if let Err(err) = local_models::insert(&state.system, actor, &row, &model).await {
        let _ = std::fs::remove_file(models.path(&id));
        return Err(match err {
            StoreError::WrongState(message) => {
                ApiError::Conflict { code: "provider_name_taken", message: message.into() }
            }
            StoreError::Exists => {
                ApiError::Conflict { code: "already_imported", message: "this model is already imported".into() }
            }
            other => other.into(),
        });
    }
    state.agent.providers_changed();
    // The administrator's own change is theirs to have accepted (§3).
    let key = format!("provider.{}", local_models::PROVIDER_ID);
    state.agent.accept_own(by, |change| change.key == key).await;
    state.agent.announce_notices(Some(&actor.id)).await;
    tracing::info!(model = %id, bytes = row.file_size, "local model added");
    Ok(json!({ "id": id, "model": format!("{}/{id}", local_models::PROVIDER_NAME) }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadQuery {
    name: Option<String>,
}

/// `POST /api/local-models/upload?name=…` (administrators): the body is the GGUF file
/// itself, streamed to disk and hashed as it arrives, then checked and offered like an
/// import. A transfer that breaks off leaves nothing behind.
pub async fn upload(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Query(query): Query<UploadQuery>,
    body: axum::body::Body,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let name = given_name(query.name.as_deref())?;
    if !local::AVAILABLE {
        return Err(import_error(ImportError::NotBuilt));
    }
    let models = state.agent.local_models().clone();
    let temp = models.partial_path("upload").map_err(|err| ApiError::Internal(Box::new(err)))?;
    let sha256 = match receive(body, &temp).await {
        Ok(sha256) => sha256,
        Err(err) => {
            let _ = tokio::fs::remove_file(&temp).await;
            return Err(err);
        }
    };
    let fallback = name.clone().unwrap_or_else(|| "uploaded model".to_owned());
    let staged = models.adopt(temp, sha256, fallback).await.map_err(import_error)?;
    let installed = install(&state, &actor, &caller.session, staged, name, "upload".to_owned()).await?;
    Ok((StatusCode::CREATED, Json(installed)))
}

/// Writes a request body to `path`, synced, and returns its SHA-256.
async fn receive(body: axum::body::Body, path: &std::path::Path) -> Result<String, ApiError> {
    use futures_util::StreamExt;
    use sha2::Digest;
    use tokio::io::AsyncWriteExt;
    let mut file = tokio::fs::File::create(path).await.map_err(|err| ApiError::Internal(Box::new(err)))?;
    let mut hasher = sha2::Sha256::new();
    let mut stream = body.into_data_stream();
    let mut received = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|err| ApiError::BadRequest {
            code: "upload_interrupted",
            message: format!("the upload stopped after {received} bytes ({err}); try again"),
        })?;
        hasher.update(&chunk);
        received += chunk.len() as u64;
        file.write_all(&chunk).await.map_err(|err| ApiError::Internal(Box::new(err)))?;
    }
    if received == 0 {
        return Err(ApiError::BadRequest { code: "empty_upload", message: "the upload was empty".to_owned() });
    }
    file.sync_all().await.map_err(|err| ApiError::Internal(Box::new(err)))?;
    Ok(hex::encode(hasher.finalize()))
}

/// `GET /api/local-models` (administrators): the models, the disk they take and what the
/// engine is doing.
pub async fn list(State(state): State<AppState>, AdminActor(actor): AdminActor) -> Result<Json<Value>, ApiError> {
    let models = local_models::list(&state.system).await?;
    let disk_bytes: i64 = models.iter().map(|m| m.file_size).sum();
    // The figures of the asking administrator's own last request only: another person's
    // would tell how much of their prompt a guess shares.
    let engine = state.agent.local_models().status(&actor.id);
    Ok(Json(json!({ "models": models, "disk_bytes": disk_bytes, "engine": engine })))
}

/// `DELETE /api/local-models/{id}` (administrators): unloads it if loaded, withdraws it
/// and removes its file.
pub async fn delete(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    local_models::delete(&state.system, &actor, &id).await.map_err(|err| match err {
        StoreError::NotFound => ApiError::Missing { code: "no_model", message: format!("no local model {id}") },
        other => other.into(),
    })?;
    state.agent.providers_changed();
    let models: &LocalModels = state.agent.local_models();
    models.unload(&id).await;
    if let Err(err) = std::fs::remove_file(models.path(&id))
        && err.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(model = %id, error = %err, "could not remove a deleted model's file");
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/local-models/{id}/retry` (administrators): lets a model that crashed the
/// built-in model's worker too often start again. 204; 404 for no such model.
pub async fn retry(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    local_models::record_retry(&state.system, &actor, &id).await.map_err(|err| match err {
        StoreError::NotFound => ApiError::Missing { code: "no_model", message: format!("no local model {id}") },
        other => other.into(),
    })?;
    let had_crashes = state.agent.local_models().retry(&id);
    tracing::info!(model = %id, had_crashes, "local model may start again");
    Ok(StatusCode::NO_CONTENT)
}

/// `base`, or `base-2`, `base-3`… whichever is free.
async fn free_id(state: &AppState, base: &str) -> Result<String, ApiError> {
    for n in 1..1000 {
        let candidate = if n == 1 { base.to_owned() } else { format!("{base}-{n}") };
        if local_models::id_free(&state.system, &candidate).await? {
            return Ok(candidate);
        }
    }
    Err(ApiError::Conflict { code: "id_taken", message: format!("too many models are called {base}") })
}

fn import_error(err: ImportError) -> ApiError {
    let message = err.to_string();
    match err {
        ImportError::NotBuilt => ApiError::Unavailable { code: "local_model_unavailable", message },
        ImportError::Unreadable { .. } | ImportError::NotAFile(_) => {
            ApiError::BadRequest { code: "unreadable", message }
        }
        ImportError::OutsideImportDirs(_) => ApiError::Refused { code: "outside_import_folders", message },
        ImportError::Invalid(_) | ImportError::Unsupported(_) => {
            ApiError::BadRequest { code: "invalid_model", message }
        }
        ImportError::Io(source) => ApiError::Internal(Box::new(source)),
    }
}

/// The name a person gave a model: none when they left it blank (the model's own name or
/// its file's is used then); at most 200 characters.
fn given_name(raw: Option<&str>) -> Result<Option<String>, ApiError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(name) if name.chars().count() > 200 => Err(ApiError::BadRequest {
            code: "invalid_name",
            message: "a model's name is at most 200 characters".to_owned(),
        }),
        Some(name) => Ok(Some(name.to_owned())),
    }
}

/// llama.cpp's name for a `general.file_type`.
fn quantization(file_type: u32) -> String {
    let known = match file_type {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        19 => "IQ2_XXS",
        20 => "IQ2_XS",
        24 => "IQ1_S",
        25 => "IQ4_NL",
        26 => "IQ3_S",
        28 => "IQ4_XS",
        32 => "BF16",
        _ => return format!("type {file_type}"),
    };
    known.to_owned()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DownloadBody {
    /// A model of the catalogue, by id; or else:
    catalogue: Option<String>,
    /// an http(s) address of a GGUF file,
    url: Option<String>,
    /// with the file's SHA-256, checked before the model is offered.
    sha256: Option<String>,
    name: Option<String>,
}

/// What one download fetches and checks.
struct Source {
    /// The catalogue's id for it, when it is one of the catalogue's.
    catalogue: Option<String>,
    url: String,
    sha256: Option<String>,
    member: Option<local::catalogue::ArchiveMember>,
    name: Option<String>,
    shown: String,
}

/// `GET /api/local-models/catalogue` (administrators): the recommended models, each
/// marked when it is already here.
pub async fn catalogue(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let here = local_models::list(&state.system).await?;
    let entries: Vec<Value> = local::catalogue::entries()
        .into_iter()
        .map(|entry| {
            // The same file, by its checksum.
            let checksum = entry.archive_member.as_ref().map_or(entry.sha256.as_str(), |m| m.sha256.as_str());
            let installed = here.iter().find(|m| m.sha256 == checksum);
            let mut value = json!(entry);
            value["installed"] = json!(installed.map(|m| format!("{}/{}", local_models::PROVIDER_NAME, m.id)));
            value
        })
        .collect();
    // A build without the engine, or a processor below its baseline: said before anyone
    // downloads a model that could not run.
    let unavailable = state.agent.local_models().unavailable();
    Ok(Json(json!({ "available": unavailable.is_none(), "unavailable": unavailable, "models": entries })))
}

/// `POST /api/local-models/downloads` (administrators): fetches a model of the catalogue,
/// or from an address, in the background; 202 `{"id"}`. Progress goes to the
/// administrators' windows as `local_model_download` events and to
/// `GET /api/local-models/downloads`. Asked again after an interruption, it resumes where
/// the transfer stopped.
pub async fn download(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Body(req): Body<DownloadBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    if !local::AVAILABLE {
        return Err(import_error(ImportError::NotBuilt));
    }
    let source = match req.catalogue.as_deref() {
        Some(id) => {
            let entry = local::catalogue::entries().into_iter().find(|e| e.id == id).ok_or_else(|| {
                ApiError::Missing { code: "no_such_model", message: format!("the catalogue has no model {id}") }
            })?;
            Source {
                catalogue: Some(entry.id),
                url: entry.source_url,
                sha256: Some(entry.sha256),
                member: entry.archive_member,
                name: Some(given_name(req.name.as_deref())?.unwrap_or_else(|| entry.name.clone())),
                shown: entry.name,
            }
        }
        None => source_from_address(req)?,
    };
    // The same file asked for again finds its partial download by this id.
    let id = {
        use sha2::Digest;
        let key = source.sha256.clone().unwrap_or_else(|| source.url.clone());
        hex::encode(sha2::Sha256::digest(key.as_bytes()))[..16].to_owned()
    };
    let models = state.agent.local_models().clone();
    if !models.downloads().begin(&id, &source.shown, &source.url, source.catalogue.as_deref()) {
        let shown = &source.shown;
        return Err(ApiError::Conflict { code: "downloading", message: format!("{shown} is already downloading") });
    }
    let task_id = id.clone();
    let by = caller.session.clone();
    tokio::spawn(async move { run_download(&state, &actor, &by, &task_id, source).await });
    Ok((StatusCode::ACCEPTED, Json(json!({ "id": id }))))
}

fn source_from_address(req: DownloadBody) -> Result<Source, ApiError> {
    let url = req
        .url
        .as_deref()
        .and_then(|raw| url::Url::parse(raw.trim()).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
        .ok_or_else(|| ApiError::BadRequest {
            code: "invalid_url",
            message: "name a model of the catalogue, or give an http or https address".into(),
        })?;
    let sha256 = match req.sha256.as_deref().map(|h| h.trim().to_ascii_lowercase()) {
        Some(hash) if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => Some(hash),
        Some(_) => {
            return Err(ApiError::BadRequest { code: "invalid_sha256", message: "a SHA-256 is 64 hex digits".into() });
        }
        None => None,
    };
    let name = given_name(req.name.as_deref())?;
    let file_name = url.path_segments().and_then(|mut s| s.next_back()).unwrap_or("model").to_owned();
    let shown = name.clone().unwrap_or_else(|| file_name.trim_end_matches(".gguf").to_owned());
    Ok(Source { catalogue: None, url: url.to_string(), sha256, member: None, name, shown })
}

/// `GET /api/local-models/downloads` (administrators)
pub async fn downloads(State(state): State<AppState>) -> Json<Vec<local::download::Status>> {
    Json(state.agent.local_models().downloads().list())
}

/// How often a download reads again who the administrators are.
const MANAGERS_REFRESH: std::time::Duration = std::time::Duration::from_secs(2);

/// Fetches, checks and offers one model, telling whoever administers the instance at the
/// time how it goes.
async fn run_download(
    state: &AppState,
    actor: &crate::store::audit::Actor,
    by: &crate::users::sessions::Session,
    id: &str,
    source: Source,
) {
    let models = state.agent.local_models().clone();
    let events = state.agent.events().clone();
    // Who hears of it: the administrators of the moment, read again every few seconds so
    // that someone who stops being one stops hearing of it.
    let mut first = crate::store::roles::managers(&state.system).await.unwrap_or_default();
    if !first.contains(&actor.id) {
        first.push(actor.id.clone());
    }
    let managers = std::sync::Arc::new(std::sync::Mutex::new(first));
    let _refresh = {
        let (managers, system) = (std::sync::Arc::clone(&managers), state.system.clone());
        tokio_util::task::AbortOnDropHandle::new(tokio::spawn(async move {
            loop {
                tokio::time::sleep(MANAGERS_REFRESH).await;
                if let Ok(now) = crate::store::roles::managers(&system).await {
                    *managers.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = now;
                }
            }
        }))
    };
    let tell = |status: Option<local::download::Status>| {
        if let Some(status) = status {
            let event = crate::agent::events::LiveEvent::LocalModelDownload { download: status };
            for manager in managers.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter() {
                events.to_person(manager, &event);
            }
        }
    };
    let failed = |why: String| tell(models.downloads().update(id, |d| fail(d, why)));
    let partial = models.dir().join(format!(".download-{id}.partial"));
    if let Err(err) = std::fs::create_dir_all(models.dir()) {
        return failed(err.to_string());
    }
    let reach = models.settings().download_reach;
    let client = local::download::client(reach);
    let fetched = local::download::fetch(&client, reach, &source.url, &partial, |progress| {
        tell(models.downloads().update(id, |d| {
            d.received = progress.received;
            d.total = progress.total;
        }));
    })
    .await;
    let sha256 = match fetched {
        Ok(sha256) => sha256,
        Err(err @ local::download::DownloadError::Interrupted { .. }) => {
            return tell(models.downloads().update(id, |d| {
                d.state = "interrupted";
                d.error = Some(err.to_string());
            }));
        }
        Err(err) => return failed(err.to_string()),
    };
    if let Some(expected) = source.sha256.as_ref().filter(|expected| **expected != sha256) {
        let _ = tokio::fs::remove_file(&partial).await;
        return failed(mismatch(&sha256, expected));
    }
    tell(models.downloads().update(id, |d| d.state = "checking"));
    let (file, sha256) = match source.member {
        None => (partial, sha256),
        Some(member) => match unpack(&models, &partial, &member).await {
            Ok(unpacked) => unpacked,
            Err(why) => return failed(why),
        },
    };
    let staged = match models.adopt(file, sha256, source.shown).await {
        Ok(staged) => staged,
        Err(err) => return failed(err.to_string()),
    };
    match install(state, actor, by, staged, source.name, format!("url:{}", source.url)).await {
        Ok(installed) => tell(models.downloads().update(id, |d| {
            d.state = "done";
            d.model = installed["model"].as_str().map(str::to_owned);
        })),
        Err(err) => failed(err.to_string()),
    }
}

/// Takes the model out of a downloaded archive and checks it; the archive is removed
/// either way. The model's partial file and its checksum.
async fn unpack(
    models: &LocalModels,
    archive: &std::path::Path,
    member: &local::catalogue::ArchiveMember,
) -> Result<(std::path::PathBuf, String), String> {
    let out = models.partial_path("unpack").map_err(|err| err.to_string())?;
    let (from, to, path) = (archive.to_owned(), out.clone(), member.path.clone());
    let extracted = tokio::task::spawn_blocking(move || local::catalogue::extract(&from, &path, &to))
        .await
        .map_err(|err| err.to_string())
        .and_then(|done| done.map_err(|err| format!("the download is not the archive expected ({err})")));
    let _ = tokio::fs::remove_file(archive).await;
    match extracted {
        Ok(sha256) if sha256 == member.sha256 => Ok((out, sha256)),
        Ok(sha256) => {
            let _ = tokio::fs::remove_file(&out).await;
            Err(mismatch(&sha256, &member.sha256))
        }
        Err(why) => {
            let _ = tokio::fs::remove_file(&out).await;
            Err(why)
        }
    }
}

fn mismatch(actual: &str, expected: &str) -> String {
    format!(
        "the file's checksum is {actual}, not the expected {expected}: it was damaged or replaced on the way, so it \
         was deleted. Try again, or import a copy you trust."
    )
}

fn fail(status: &mut local::download::Status, why: String) {
    status.state = "failed";
    status.error = Some(why);
}
