//! Supervision edges (docs/architecture.md §6.2): asked for by an administrator, made only
//! while the supervised person's key is open (their enrolment, or their acceptance in their
//! own session), used by the supervisor to open that space read-only, and ended by either
//! the administrator or — where their role allows — the supervised person.
//!
//! The supervisor's copy of the key is `crypto::seal_to` their public key, bound to both
//! ids, the purpose and the key version ([`seal_context`]): a copy moved to another edge,
//! person or version fails to open. Every open and every item read is logged in the
//! supervised person's own file and counted in the shared database.

use zeroize::Zeroizing;

use super::sessions::Session;
use super::{AccountError, Accounts, PublicUser};
use crate::crypto::{self, Dek};
use crate::ids::UserId;
use crate::store::audit::Actor;
use crate::store::private::PrivateStore;
use crate::store::supervision::{self as edges, Edge};
use crate::store::{roles, users as user_rows};

/// What a supervisor's key copy is bound to: purpose, both ids and the key's version.
pub fn seal_context(supervisor: &UserId, supervised: &UserId, key_version: i64) -> Vec<u8> {
    format!("skald supervision v1\0{supervisor}\0{supervised}\0{key_version}").into_bytes()
}

/// Seals `dek` to a supervisor's public key for one edge.
fn seal_for(
    dek: &Dek,
    public: &[u8],
    supervisor: &UserId,
    supervised: &UserId,
    version: i64,
) -> Result<Vec<u8>, AccountError> {
    let public: [u8; 32] = public.try_into().map_err(|_| {
        AccountError::Supervision("the supervisor has no usable public key; they must log in once".into())
    })?;
    Ok(crypto::seal_to(&public, dek.as_bytes(), &seal_context(supervisor, supervised, version)))
}

/// A supervised person's space, opened read-only by their supervisor: reads go through
/// it, and each is logged before it is answered.
pub struct SupervisedSpace {
    pub space: PrivateStore,
    pub person: PublicUser,
    edge: String,
    supervisor: (UserId, String),
}

impl SupervisedSpace {
    /// Logs an access in the supervised person's file and counts it in the shared one.
    pub async fn log(
        &self,
        accounts: &Accounts,
        action: &str,
        what: &str,
        item: Option<&str>,
    ) -> Result<(), AccountError> {
        edges::log_access(&self.space, (&self.supervisor.0, &self.supervisor.1), action, what, item).await?;
        let (opens, reads) = if action == "opened" { (1, 0) } else { (0, 1) };
        edges::count_access(accounts.system(), &self.edge, opens, reads).await?;
        Ok(())
    }

    pub async fn close(self) {
        self.space.close().await;
    }
}

impl Accounts {
    /// An administrator asks for an edge. Both roles must allow it; a person who has not
    /// enrolled yet gets it made at their enrolment (and is told before choosing a password).
    pub async fn request_supervision(
        &self,
        actor: &Actor,
        supervisor: &UserId,
        supervised: &UserId,
    ) -> Result<Edge, AccountError> {
        if supervisor == supervised {
            return Err(AccountError::Supervision("a person cannot supervise themselves".into()));
        }
        let system = self.system();
        let (Some(over), Some(under)) =
            (user_rows::find(system, supervisor).await?, user_rows::find(system, supervised).await?)
        else {
            return Err(AccountError::NotFound);
        };
        if over.status != "active" || under.status == "deactivated" {
            return Err(AccountError::Supervision(
                "both people must be active (or, to be supervised, still to enrol)".into(),
            ));
        }
        self.check_supervision(&over.id, &under.role_id).await?;
        let at_enrolment = under.status == "pending";
        let id = edges::request(system, actor, (&over.id, &over.name), (&under.id, &under.name), at_enrolment).await?;
        tracing::info!(edge = %id, at_enrolment, "supervision requested");
        edges::get(system, &id).await?.ok_or(AccountError::NotFound)
    }

    /// Whether `supervisor` may supervise someone of `role`: their own role must allow
    /// supervising, and `role` being supervised.
    pub async fn check_supervision(&self, supervisor: &UserId, role: &crate::ids::RoleId) -> Result<(), AccountError> {
        let system = self.system();
        let over = user_rows::find(system, supervisor).await?.ok_or(AccountError::NotFound)?;
        if over.status != "active" {
            return Err(AccountError::Supervision(format!("{} is not active", over.name)));
        }
        let over_role = roles::get(system, &over.role_id).await?.ok_or(AccountError::NotFound)?;
        if !over_role.may_supervise {
            return Err(AccountError::Supervision(format!(
                "{}'s role ({}) may not supervise anyone",
                over.name, over_role.label
            )));
        }
        let under_role = roles::get(system, role).await?.ok_or_else(|| AccountError::UnknownRole(role.to_string()))?;
        if !under_role.may_be_supervised {
            return Err(AccountError::Supervision(format!("the role {} may not be supervised", under_role.label)));
        }
        Ok(())
    }

    /// At enrolment, with the new key in hand: the edges made with the account become active.
    pub(super) async fn seal_at_enrolment(&self, supervised: &UserId, dek: &Dek) -> Result<usize, AccountError> {
        let mut made = 0;
        for pending in edges::pending_for(self.system(), supervised, true).await? {
            let sealed =
                seal_for(dek, &pending.supervisor_public, &pending.supervisor_id, supervised, pending.key_version)?;
            if edges::activate(self.system(), &pending.id, &sealed).await? {
                made += 1;
            }
        }
        Ok(made)
    }

    /// The supervised person accepts a request in their own session: their key seals the copy.
    pub async fn accept_supervision(&self, session: &Session, id: &str) -> Result<Edge, AccountError> {
        let edge = edges::get(self.system(), id).await?.ok_or(AccountError::NotFound)?;
        if edge.supervised_id != session.user_id {
            return Err(AccountError::NotFound);
        }
        if edge.state != "pending" {
            return Err(AccountError::WrongState("this supervision is already in place"));
        }
        let pending = edges::pending_for(self.system(), &session.user_id, false).await?;
        let Some(to_seal) = pending.into_iter().find(|p| p.id == id) else {
            return Err(AccountError::Supervision("the supervisor cannot receive a key copy now".into()));
        };
        let sealed = seal_for(
            session.dek(),
            &to_seal.supervisor_public,
            &to_seal.supervisor_id,
            &session.user_id,
            to_seal.key_version,
        )?;
        if !edges::activate(self.system(), id, &sealed).await? {
            return Err(AccountError::WrongState("this supervision is already in place"));
        }
        tracing::info!(edge = %id, "supervision accepted");
        edges::get(self.system(), id).await?.ok_or(AccountError::NotFound)
    }

    /// Ends an edge: by an administrator (`by_admin`), by the supervisor, or by the
    /// supervised person where their role allows. The key copy goes with the row.
    pub async fn end_supervision(&self, actor: &Actor, by_admin: bool, id: &str) -> Result<Edge, AccountError> {
        let edge = edges::get(self.system(), id).await?.ok_or(AccountError::NotFound)?;
        let is_supervised = edge.supervised_id == actor.id;
        if !by_admin && edge.supervisor_id != actor.id && !is_supervised {
            return Err(AccountError::NotFound);
        }
        if !by_admin && is_supervised && edge.state == "active" {
            let role = roles::of_active_user(self.system(), &actor.id).await?.ok_or(AccountError::NotFound)?;
            if !role.may_end_supervision {
                return Err(AccountError::Supervision(format!(
                    "your role ({}) does not let you end this supervision yourself; ask an administrator",
                    role.label
                )));
            }
        }
        let removed = edges::remove(self.system(), actor, id).await?;
        tracing::info!(edge = %id, "supervision ended; the key copy was destroyed");
        Ok(removed)
    }

    /// Opens a supervised person's space for their supervisor: the supervisor's own secret
    /// (inside their file) opens the sealed copy, which opens the supervised file. Without an
    /// active edge there is nothing to open, and nothing is logged.
    pub async fn open_supervised(
        &self,
        supervisor: &Session,
        supervised: &UserId,
    ) -> Result<SupervisedSpace, AccountError> {
        let Some((edge, sealed, version)) = edges::sealed_copy(self.system(), &supervisor.user_id, supervised).await?
        else {
            return Err(AccountError::NotSupervisor);
        };
        let row = user_rows::find(self.system(), supervised).await?.ok_or(AccountError::NotFound)?;
        if row.status != "active" {
            return Err(AccountError::NotSupervisor);
        }
        let me = user_rows::find(self.system(), &supervisor.user_id).await?.ok_or(AccountError::NotFound)?;
        let secret = supervisor.space.key_secret().await?;
        let opened: Zeroizing<Vec<u8>> =
            crypto::open_sealed(&secret, &sealed, &seal_context(&supervisor.user_id, supervised, version))
                .map_err(AccountError::KeyRecord)?;
        let dek =
            Dek::from_slice(&opened).ok_or(AccountError::KeyRecord(crypto::CryptoError::Malformed("key copy")))?;
        let space = self.open_space(&row, &dek).await?;
        Ok(SupervisedSpace { space, person: PublicUser::from(&row), edge, supervisor: (me.id, me.name) })
    }

    /// The people whose sealed copies open `user`'s space: their supervisors, by name.
    pub async fn supervisors_of(&self, user: &UserId) -> Result<Vec<Edge>, AccountError> {
        Ok(edges::of_person(self.system(), user).await?.into_iter().filter(|e| &e.supervised_id == user).collect())
    }

    /// Names of the supervisors a pending person's account was made with, for the
    /// enrolment screen to say before the password is chosen.
    pub async fn supervisors_at_enrolment(&self, name: &str, code: &str) -> Result<Vec<String>, AccountError> {
        let row = self.pending_enrolment(name, code).await?;
        // A right code is no failed attempt: looking before choosing a password must not
        // make the enrolment itself wait.
        self.enrolment_attempt_succeeded(name);
        let edges = edges::of_person(self.system(), &row.id).await?;
        Ok(edges.into_iter().filter(|e| e.supervised_id == row.id).map(|e| e.supervisor_name).collect())
    }
}
