//! What administrators do to people and roles: rename, change role, deactivate, reactivate,
//! delete, reissue an enrolment code; create, edit and delete roles. Each change is
//! audited in its own transaction, and none of them can leave the instance without an
//! active administrator. None of them touches anyone's keys.

use zeroize::Zeroizing;

use super::role_rules::{self, RolePatch};
use super::{AccountError, Accounts, PublicUser, enrolment_expiry, valid_name};
use crate::crypto;
use crate::ids::{RoleId, UserId};
use crate::store::audit::Actor;
use crate::store::private;
use crate::store::roles::{self, Role};
use crate::store::users as user_rows;

impl Accounts {
    pub async fn rename_person(&self, actor: &Actor, id: &UserId, name: &str) -> Result<PublicUser, AccountError> {
        let name = valid_name(name)?;
        Ok(PublicUser::from(&user_rows::rename(self.system(), actor, id, &name).await?))
    }

    pub async fn change_role(&self, actor: &Actor, id: &UserId, role: &RoleId) -> Result<PublicUser, AccountError> {
        if roles::get(self.system(), role).await?.is_none() {
            return Err(AccountError::UnknownRole(role.to_string()));
        }
        Ok(PublicUser::from(&user_rows::set_role(self.system(), actor, id, role).await?))
    }

    /// Deactivates a person and ends their sessions at once.
    pub async fn deactivate(&self, actor: &Actor, id: &UserId) -> Result<PublicUser, AccountError> {
        let row = user_rows::set_active(self.system(), actor, id, false).await?;
        let ended = self.sessions().end_user(id).await;
        tracing::info!(user = %id, ended, "person deactivated");
        Ok(PublicUser::from(&row))
    }

    pub async fn reactivate(&self, actor: &Actor, id: &UserId) -> Result<PublicUser, AccountError> {
        Ok(PublicUser::from(&user_rows::set_active(self.system(), actor, id, true).await?))
    }

    /// Deletes a person and destroys their private file. `confirm` must be their exact
    /// name: this cannot be undone, and without their recovery code nobody can read a
    /// backup of the file either.
    pub async fn delete_person(&self, actor: &Actor, id: &UserId, confirm: &str) -> Result<(), AccountError> {
        let row = user_rows::find(self.system(), id).await?.ok_or(AccountError::NotFound)?;
        if confirm != row.name {
            return Err(AccountError::ConfirmationMismatch);
        }
        self.destroy(actor, id).await
    }

    /// A person deletes their own account: `confirm` must be their exact name and
    /// `password` their current password (a stolen unlocked session alone cannot do it).
    pub async fn delete_own_account(&self, id: &UserId, password: &str, confirm: &str) -> Result<(), AccountError> {
        let row = user_rows::find(self.system(), id).await?.ok_or(AccountError::NotFound)?;
        if confirm != row.name {
            return Err(AccountError::ConfirmationMismatch);
        }
        self.check_password_of(&row, password).await?;
        let actor = Actor { id: row.id.clone(), name: row.name.clone() };
        self.destroy(&actor, id).await
    }

    /// Removes a person's row (audited) and then their private file, ending their sessions.
    async fn destroy(&self, actor: &Actor, id: &UserId) -> Result<(), AccountError> {
        user_rows::delete(self.system(), actor, id).await?;
        // Their shared memories went with their row; what others keep about them goes now
        // from the shared pool and, queued, from each file at its next unlock (§10).
        crate::store::memories::forget_person(self.system(), id).await?;
        self.sessions().end_user(id).await;
        let path = private::path_for(self.users_dir(), id);
        for suffix in ["", "-wal", "-shm"] {
            let file = format!("{}{suffix}", path.display());
            if let Err(err) = std::fs::remove_file(&file)
                && err.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(user = %id, %err, "could not remove a private file of a deleted person");
            }
        }
        tracing::info!(user = %id, "person deleted with their private file");
        Ok(())
    }

    /// A new enrolment code for someone who has not enrolled; the old code stops working.
    pub async fn reissue_enrolment(
        &self,
        actor: &Actor,
        id: &UserId,
    ) -> Result<(PublicUser, Zeroizing<String>), AccountError> {
        let code = crypto::human_code(super::ENROLMENT_CODE_BYTES);
        let row =
            user_rows::reissue_enrolment(self.system(), actor, id, &crypto::code_digest(&code), &enrolment_expiry())
                .await?;
        Ok((PublicUser::from(&row), code))
    }

    pub async fn create_role(
        &self,
        actor: &Actor,
        id: RoleId,
        label: String,
        patch: RolePatch,
    ) -> Result<Role, AccountError> {
        let role = role_rules::apply(role_rules::new_role(id, label), patch).map_err(AccountError::InvalidRole)?;
        if let Some(why) = role_rules::problem(&role) {
            return Err(AccountError::InvalidRole(why));
        }
        roles::create(self.system(), actor, &role).await?;
        Ok(role)
    }

    pub async fn update_role(&self, actor: &Actor, id: &RoleId, patch: RolePatch) -> Result<Role, AccountError> {
        let current = roles::get(self.system(), id).await?.ok_or(AccountError::NotFound)?;
        let role = role_rules::apply(current, patch).map_err(AccountError::InvalidRole)?;
        if let Some(why) = role_rules::problem(&role) {
            return Err(AccountError::InvalidRole(why));
        }
        roles::update(self.system(), actor, &role).await?;
        Ok(role)
    }

    pub async fn delete_role(&self, actor: &Actor, id: &RoleId) -> Result<(), AccountError> {
        Ok(roles::delete(self.system(), actor, id).await?)
    }
}
