//! Giving a person a new data key (docs/architecture.md §6.2): after a supervisor's copy
//! was destroyed, whoever held it may have kept the key itself, so the person can rotate
//! it. Their file is re-encrypted under the new key (`sqlcipher_export` to a copy beside
//! it), then one commit in the shared database switches the wraps, the recorded file salt
//! and every remaining supervisor's copy, then the copy takes the file's place. A crash at
//! any point leaves exactly one key opening the person's file: before the commit the old
//! one (the copy is removed at the next open), after it the new one (the copy takes its
//! place at the next open, or at start — `store::private::settle_rotation`).

use super::sessions::Session;
use super::supervision::seal_context;
use super::{AccountError, Accounts, PublicUser, RECOVERY_CODE_BYTES, Unlocked};
use crate::crypto::{self, Dek, KdfParams, Purpose};
use crate::ids::UserId;
use crate::store::private::{self, PrivateStore};
use crate::store::supervision as edges;
use crate::store::users as user_rows;

impl Accounts {
    /// Rotates `session`'s person's key; their password confirms it and wraps the new key.
    /// Every session of theirs ends (their work finishes first); the answer is a new
    /// session with a new recovery code, shown once — the old code stops working.
    pub async fn rotate_key(&self, session: &Session, password: &str) -> Result<Unlocked, AccountError> {
        let row = user_rows::find(self.system(), &session.user_id).await?.ok_or(AccountError::NotFound)?;
        let limit_key = format!("rotate/{}", row.name.to_lowercase());
        self.check_limit(&limit_key)?;
        let wrapped = self.wrap_of(&row, Purpose::Password).await?;
        let old = self.unwrap_typed(&limit_key, &wrapped, password, &row.id, Purpose::Password).await?;

        // Nobody writes the file from here: every session of theirs ends, and no one opens
        // it (a supervisor, a backup, a login) until the new key is in place.
        let ended = self.sessions().end_user(&row.id).await;
        let closed = self.hold_files().await;
        let path = private::path_for(self.users_dir(), &row.id);
        let old_salt: [u8; 16] = row
            .file_salt
            .as_deref()
            .and_then(|s| s.try_into().ok())
            .ok_or(AccountError::PrivateFile("no private file is recorded for this account"))?;
        let space = PrivateStore::open(&path, &old, &old_salt, &row.id).await?;
        let (new, new_salt) = (Dek::generate(), crypto::file_salt());
        let next = private::rotated_path(&path);
        let exported = space.export_rekeyed(&next, &new, &new_salt).await;
        space.close().await;
        exported?;
        // The copy must open with the new key and name its owner before anything switches.
        let check = PrivateStore::open(&next, &new, &new_salt, &row.id).await;
        match check {
            Ok(copy) => copy.close().await,
            Err(err) => {
                // Not committed: the copy goes, the old key goes on opening the file.
                let _ = private::settle_rotation(&path, &old_salt);
                return Err(err.into());
            }
        }

        let target = self.kdf_target().await?;
        let code = crypto::human_code(RECOVERY_CODE_BYTES);
        let password_wrap = self.wrap(&new, password.as_bytes(), &row.id, Purpose::Password, target).await?;
        let recovery_wrap = self
            .wrap(&new, crypto::normalize_code(&code).as_bytes(), &row.id, Purpose::Recovery, KdfParams::FLOOR)
            .await?;
        let resealed = self.reseal(&row.id, &new).await?;
        user_rows::commit_rotation(
            self.system(),
            &row.id,
            &new_salt,
            &[(Purpose::Password, &password_wrap), (Purpose::Recovery, &recovery_wrap)],
            &resealed,
        )
        .await?;
        private::settle_rotation(&path, &new_salt)
            .map_err(|_| AccountError::PrivateFile("the re-encrypted file could not take its place; log in again"))?;
        drop(closed);
        tracing::info!(user = %row.id, ended, supervisors = resealed.len(), "key rotated; a new recovery code was issued");

        let row = user_rows::find(self.system(), &row.id).await?.ok_or(AccountError::NotFound)?;
        let space = self.open_space(&row, &new).await?;
        self.start_session(PublicUser::from(&row), space, new, &row.role_id, Some(code)).await
    }

    /// Each remaining supervisor's copy, sealed again to the new key for the next version.
    async fn reseal(&self, supervised: &UserId, new: &Dek) -> Result<Vec<(String, Vec<u8>)>, AccountError> {
        let mut out = Vec::new();
        for edge in edges::active_for(self.system(), supervised).await? {
            let public: [u8; 32] = edge.supervisor_public.as_slice().try_into().map_err(|_| {
                AccountError::Supervision("a supervisor has no usable public key; end that supervision first".into())
            })?;
            let context = seal_context(&edge.supervisor_id, supervised, edge.key_version + 1);
            out.push((edge.id, crypto::seal_to(&public, new.as_bytes(), &context)));
        }
        Ok(out)
    }

    /// At start, and before a file opens: finishes or undoes a rotation a crash cut short.
    pub async fn settle_rotations(&self) -> Result<usize, AccountError> {
        let mut settled = 0;
        for row in user_rows::list(self.system()).await? {
            let Some(salt) = row.file_salt.as_deref().and_then(|s| <[u8; 16]>::try_from(s).ok()) else { continue };
            let path = private::path_for(self.users_dir(), &row.id);
            if private::settle_rotation(&path, &salt).unwrap_or(false) {
                tracing::info!(user = %row.id, "a key rotation cut short was finished");
                settled += 1;
            }
        }
        Ok(settled)
    }
}
