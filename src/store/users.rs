//! The people of the instance and the wraps of their keys, in the shared database.
//! Nothing stored here opens a private space on its own (§2, §4).

use serde_json::json;
use sqlx::Row;

use super::audit::{self, Actor};
use super::{StoreError, SystemStore, timestamp};
use crate::crypto::{KdfParams, Purpose, WrappedKey};
use crate::ids::{RoleId, UserId};

/// A person as the directory knows them.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UserRow {
    pub id: UserId,
    pub name: String,
    pub role_id: RoleId,
    pub status: String,
    pub enrolment_digest: Option<Vec<u8>>,
    pub enrolment_expires: Option<String>,
    pub file_salt: Option<Vec<u8>>,
    pub public_key: Option<Vec<u8>>,
    pub key_version: i64,
}

/// `SELECT <the UserRow columns> FROM users <tail>`, as a literal.
macro_rules! select_users {
    ($tail:literal) => {
        concat!(
            "SELECT id, name, role_id, status, enrolment_digest, enrolment_expires, file_salt, public_key, key_version ",
            "FROM users ",
            $tail
        )
    };
}

/// What an activated account writes in one transaction: its row and both wraps.
pub struct Activation<'a> {
    pub id: &'a UserId,
    pub file_salt: &'a [u8; 16],
    pub public_key: &'a [u8; 32],
    pub password_wrap: &'a WrappedKey,
    pub recovery_wrap: &'a WrappedKey,
}

impl Activation<'_> {
    fn wraps(&self) -> [(Purpose, &WrappedKey); 2] {
        [(Purpose::Password, self.password_wrap), (Purpose::Recovery, self.recovery_wrap)]
    }
}

pub async fn list(store: &SystemStore) -> Result<Vec<UserRow>, StoreError> {
    Ok(sqlx::query_as(select_users!("ORDER BY name COLLATE NOCASE")).fetch_all(store.pool()).await?)
}

pub async fn find(store: &SystemStore, id: &UserId) -> Result<Option<UserRow>, StoreError> {
    Ok(sqlx::query_as(select_users!("WHERE id = ?")).bind(id).fetch_optional(store.pool()).await?)
}

pub async fn find_by_name(store: &SystemStore, name: &str) -> Result<Option<UserRow>, StoreError> {
    Ok(sqlx::query_as(select_users!("WHERE name = ?")).bind(name).fetch_optional(store.pool()).await?)
}

/// Adds a person who has yet to choose a password.
pub async fn insert_pending(
    store: &SystemStore,
    actor: &Actor,
    id: &UserId,
    name: &str,
    role: &RoleId,
    enrolment_digest: &[u8; 32],
    expires: &str,
) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query(
        "INSERT INTO users (id, name, role_id, status, enrolment_digest, enrolment_expires, created_at)
         VALUES (?, ?, ?, 'pending', ?, ?, ?)",
    )
    .bind(id)
    .bind(name)
    .bind(role)
    .bind(&enrolment_digest[..])
    .bind(expires)
    .bind(timestamp())
    .execute(&mut *tx)
    .await
    .map_err(name_taken)?;
    audit::record(&mut tx, actor, Some((id, name)), "person.added", json!({ "role": role })).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(())
}

/// Creates the first person, already active, only while there is nobody else; false when
/// someone got there first.
pub async fn insert_first(
    store: &SystemStore,
    name: &str,
    role: &RoleId,
    activation: &Activation<'_>,
) -> Result<bool, StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let now = timestamp();
    let inserted = sqlx::query(
        "INSERT INTO users (id, name, role_id, status, file_salt, public_key, created_at, activated_at)
         SELECT ?, ?, ?, 'active', ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM users)",
    )
    .bind(activation.id)
    .bind(name)
    .bind(role)
    .bind(&activation.file_salt[..])
    .bind(&activation.public_key[..])
    .bind(&now)
    .bind(&now)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if inserted == 0 {
        return Ok(false);
    }
    put_wraps(&mut tx, activation.id, &activation.wraps()).await?;
    sqlx::query("UPDATE instance SET setup_completed_at = ? WHERE id = 1").bind(&now).execute(&mut *tx).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(true)
}

/// Spends an enrolment code: the pending row becomes active with its keys, only if the
/// code's digest still matches (so a code opens at most one enrolment, even when raced).
pub async fn activate(store: &SystemStore, digest: &[u8; 32], activation: &Activation<'_>) -> Result<bool, StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let updated = sqlx::query(
        "UPDATE users SET status = 'active', enrolment_digest = NULL, enrolment_expires = NULL,
                          file_salt = ?, public_key = ?, activated_at = ?
         WHERE id = ? AND status = 'pending' AND enrolment_digest = ?",
    )
    .bind(&activation.file_salt[..])
    .bind(&activation.public_key[..])
    .bind(timestamp())
    .bind(activation.id)
    .bind(&digest[..])
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if updated == 0 {
        return Ok(false);
    }
    put_wraps(&mut tx, activation.id, &activation.wraps()).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(true)
}

pub async fn wrap(store: &SystemStore, id: &UserId, purpose: Purpose) -> Result<Option<WrappedKey>, StoreError> {
    let row = sqlx::query("SELECT wrapped FROM key_wraps WHERE user_id = ? AND purpose = ?")
        .bind(id)
        .bind(purpose.as_str())
        .fetch_optional(store.pool())
        .await?;
    Ok(row.map(|r| WrappedKey(r.get("wrapped"))))
}

/// What opens a person's space: the purposes of their key wraps (`password`, `recovery`).
pub async fn wrap_purposes(store: &SystemStore, id: &UserId) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar("SELECT purpose FROM key_wraps WHERE user_id = ? ORDER BY purpose")
        .bind(id)
        .fetch_all(store.pool())
        .await?)
}

/// Replaces some of a person's wraps in one transaction: a crash leaves all old or all new.
pub async fn replace_wraps(
    store: &SystemStore,
    id: &UserId,
    wraps: &[(Purpose, &WrappedKey)],
) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    put_wraps(&mut tx, id, wraps).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(())
}

/// A key rotation's one commit (§6.2): the new wraps, the new file's salt, a key version
/// one higher, and each remaining supervisor's copy sealed again for that version.
pub async fn commit_rotation(
    store: &SystemStore,
    id: &UserId,
    file_salt: &[u8; 16],
    wraps: &[(Purpose, &WrappedKey)],
    resealed: &[(String, Vec<u8>)],
) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    put_wraps(&mut tx, id, wraps).await?;
    sqlx::query("UPDATE users SET file_salt = ?, key_version = key_version + 1 WHERE id = ?")
        .bind(&file_salt[..])
        .bind(id)
        .execute(&mut *tx)
        .await?;
    for (edge, sealed) in resealed {
        sqlx::query(
            "UPDATE supervision SET sealed_key = ?, key_version = key_version + 1 WHERE id = ? AND state = 'active'",
        )
        .bind(sealed)
        .bind(edge)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    store.people_changed();
    Ok(())
}

async fn put_wraps(
    tx: &mut sqlx::SqliteConnection,
    id: &UserId,
    wraps: &[(Purpose, &WrappedKey)],
) -> Result<(), StoreError> {
    let now = timestamp();
    for (purpose, wrapped) in wraps {
        sqlx::query(
            "INSERT INTO key_wraps (user_id, purpose, wrapped, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (user_id, purpose) DO UPDATE SET wrapped = excluded.wrapped, updated_at = excluded.updated_at",
        )
        .bind(id)
        .bind(purpose.as_str())
        .bind(&wrapped.0)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// The argon2id target calibrated on this machine, if calibration has run.
pub async fn kdf_target(store: &SystemStore) -> Result<Option<KdfParams>, StoreError> {
    let row: (Option<i64>, Option<i64>, Option<i64>) =
        sqlx::query_as("SELECT kdf_m_kib, kdf_t, kdf_p FROM instance WHERE id = 1").fetch_one(store.pool()).await?;
    Ok(match row {
        (Some(m), Some(t), Some(p)) => Some(KdfParams { m_kib: m as u32, t: t as u32, p: p as u32 }),
        _ => None,
    })
}

pub async fn set_kdf_target(store: &SystemStore, params: KdfParams) -> Result<(), StoreError> {
    sqlx::query("UPDATE instance SET kdf_m_kib = ?, kdf_t = ?, kdf_p = ? WHERE id = 1")
        .bind(params.m_kib)
        .bind(params.t)
        .bind(params.p)
        .execute(store.pool())
        .await?;
    Ok(())
}

fn name_taken(err: sqlx::Error) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::NameTaken,
        _ => StoreError::Sqlx(err),
    }
}

/// How many other active people could still manage the instance if `id` could not.
async fn other_admins(tx: &mut sqlx::SqliteConnection, id: &UserId) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM users u JOIN roles r ON r.id = u.role_id
         WHERE u.status = 'active' AND r.manage_instance = 1 AND u.id <> ?",
    )
    .bind(id)
    .fetch_one(&mut *tx)
    .await?)
}

async fn locked_row(tx: &mut sqlx::SqliteConnection, id: &UserId) -> Result<UserRow, StoreError> {
    sqlx::query_as(select_users!("WHERE id = ?")).bind(id).fetch_optional(&mut *tx).await?.ok_or(StoreError::NotFound)
}

async fn manages(tx: &mut sqlx::SqliteConnection, role: &RoleId) -> Result<bool, StoreError> {
    let managing: Option<bool> = sqlx::query_scalar("SELECT manage_instance FROM roles WHERE id = ?")
        .bind(role)
        .fetch_optional(&mut *tx)
        .await?;
    managing.ok_or(StoreError::NotFound)
}

/// Renames a person; audited.
pub async fn rename(store: &SystemStore, actor: &Actor, id: &UserId, name: &str) -> Result<UserRow, StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let before = locked_row(&mut tx, id).await?;
    sqlx::query("UPDATE users SET name = ? WHERE id = ?")
        .bind(name)
        .bind(id)
        .execute(&mut *tx)
        .await
        .map_err(name_taken)?;
    audit::record(&mut tx, actor, Some((id, name)), "person.renamed", json!({ "from": before.name, "to": name }))
        .await?;
    let after = locked_row(&mut tx, id).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(after)
}

/// Gives a person another role; refused when it would leave nobody managing the instance.
pub async fn set_role(store: &SystemStore, actor: &Actor, id: &UserId, role: &RoleId) -> Result<UserRow, StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let before = locked_row(&mut tx, id).await?;
    let demotes =
        before.status == "active" && manages(&mut tx, &before.role_id).await? && !manages(&mut tx, role).await?;
    if demotes && other_admins(&mut tx, id).await? == 0 {
        return Err(StoreError::LastAdmin);
    }
    sqlx::query("UPDATE users SET role_id = ? WHERE id = ?").bind(role).bind(id).execute(&mut *tx).await?;
    let detail = json!({ "from": before.role_id, "to": role });
    audit::record(&mut tx, actor, Some((id, &before.name)), "person.role_changed", detail).await?;
    let after = locked_row(&mut tx, id).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(after)
}

/// Deactivates or reactivates an enrolled person; the last administrator stays active.
pub async fn set_active(store: &SystemStore, actor: &Actor, id: &UserId, active: bool) -> Result<UserRow, StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let before = locked_row(&mut tx, id).await?;
    let (from, to) = if active { ("deactivated", "active") } else { ("active", "deactivated") };
    if before.status != from {
        return Err(StoreError::WrongState(if active {
            "only a deactivated person can be reactivated"
        } else {
            "only an active person can be deactivated"
        }));
    }
    if !active && manages(&mut tx, &before.role_id).await? && other_admins(&mut tx, id).await? == 0 {
        return Err(StoreError::LastAdmin);
    }
    sqlx::query("UPDATE users SET status = ? WHERE id = ?").bind(to).bind(id).execute(&mut *tx).await?;
    let action = if active { "person.reactivated" } else { "person.deactivated" };
    audit::record(&mut tx, actor, Some((id, &before.name)), action, json!({})).await?;
    let after = locked_row(&mut tx, id).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(after)
}

/// Removes a person's row and key wraps; the caller removes their private file after.
pub async fn delete(store: &SystemStore, actor: &Actor, id: &UserId) -> Result<UserRow, StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let before = locked_row(&mut tx, id).await?;
    if before.status == "active" && manages(&mut tx, &before.role_id).await? && other_admins(&mut tx, id).await? == 0 {
        return Err(StoreError::LastAdmin);
    }
    sqlx::query("DELETE FROM users WHERE id = ?").bind(id).execute(&mut *tx).await?;
    audit::record(&mut tx, actor, Some((id, &before.name)), "person.deleted", json!({})).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(before)
}

/// A fresh enrolment code for someone who has not enrolled yet; the old one stops working.
pub async fn reissue_enrolment(
    store: &SystemStore,
    actor: &Actor,
    id: &UserId,
    digest: &[u8; 32],
    expires: &str,
) -> Result<UserRow, StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let before = locked_row(&mut tx, id).await?;
    if before.status != "pending" {
        return Err(StoreError::WrongState("this person has already enrolled"));
    }
    sqlx::query("UPDATE users SET enrolment_digest = ?, enrolment_expires = ? WHERE id = ?")
        .bind(&digest[..])
        .bind(expires)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    audit::record(&mut tx, actor, Some((id, &before.name)), "person.enrolment_reissued", json!({})).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(before)
}
