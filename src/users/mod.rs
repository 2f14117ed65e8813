//! People and their keys: setup of the first administrator, adding people, enrolment,
//! login, recovery, password change, and the sessions that hold unlocked keys (§1, §4, §7).
//!
//! The administrator adds a person and gets an enrolment code that opens nothing; only
//! when the person chooses their own password are their DEK, private file, key pair and
//! recovery code made — and the recovery code goes to them alone. Key derivation runs on
//! blocking threads behind a small semaphore, so a burst of logins cannot exhaust memory.

mod manage;
pub mod password;
pub mod rate_limit;
pub mod role_rules;
mod rotation;
pub mod sessions;
pub mod supervision;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{OnceCell, Semaphore};
use zeroize::Zeroizing;

use crate::crypto::{self, CryptoError, Dek, KdfParams, KeyPair, Purpose, WrappedKey};
use crate::ids::{RoleId, UserId};
use crate::store::audit::Actor;
use crate::store::private::{self, PrivateStore};
use crate::store::users::{self as user_rows, Activation, UserRow};
use crate::store::{StoreError, SystemStore, roles};
use rate_limit::RateLimiter;
use sessions::{Session, Sessions};

/// Unlocks that may derive keys at once (each argon2 run holds its memory cost).
const CONCURRENT_UNLOCKS: usize = 2;
/// How long one derivation should take on this machine (§4: 0.5–1 s).
const KDF_TARGET: Duration = Duration::from_millis(750);
/// How long an enrolment code works.
const ENROLMENT_VALIDITY: time::Duration = time::Duration::days(7);
/// Random bytes in an enrolment code (128 bits) and a recovery code (160 bits, ≥ 128).
const ENROLMENT_CODE_BYTES: usize = 16;
const RECOVERY_CODE_BYTES: usize = 20;
const MAX_NAME_CHARS: usize = 40;

/// How new keys are costed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KdfPolicy {
    /// Calibrated on this machine once, then stored as the instance's target.
    Calibrated,
    /// The floor, for fast tests. Honoured only by debug builds.
    Floor,
}

impl KdfPolicy {
    /// The fast floor is a test setting: debug builds honour `SKALD_INSECURE_FAST_KDF=1`,
    /// release builds ignore it.
    pub fn from_env() -> Self {
        let asked = std::env::var_os("SKALD_INSECURE_FAST_KDF").is_some_and(|v| v == "1");
        if cfg!(debug_assertions) && asked { Self::Floor } else { Self::Calibrated }
    }
}

/// What any caller may know about a person.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "Person")]
pub struct PublicUser {
    pub id: UserId,
    pub name: String,
    pub role: RoleId,
    pub status: String,
}

impl From<&UserRow> for PublicUser {
    fn from(row: &UserRow) -> Self {
        Self { id: row.id.clone(), name: row.name.clone(), role: row.role_id.clone(), status: row.status.clone() }
    }
}

/// A person just unlocked: who, their bearer, and — at enrolment, setup and recovery — the
/// recovery code, which is shown to them once and stored nowhere in the clear.
pub struct Unlocked {
    pub user: PublicUser,
    pub token: Zeroizing<String>,
    pub recovery_code: Option<Zeroizing<String>>,
}

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("Skald is already set up; log in instead")]
    AlreadySetUp,
    #[error("{0}")]
    InvalidName(&'static str),
    #[error("{0}")]
    WeakPassword(String),
    #[error("someone here already has that name")]
    NameTaken,
    #[error("no such person or role")]
    NotFound,
    #[error("that already exists")]
    Exists,
    #[error("{0}")]
    LastAdmin(String),
    #[error("{0}")]
    RoleInUse(String),
    #[error("{0}")]
    WrongState(&'static str),
    #[error("{0}")]
    InvalidRole(String),
    #[error("type the person's exact name to confirm; deleting destroys their private space for good")]
    ConfirmationMismatch,
    #[error("there is no role {0}")]
    UnknownRole(String),
    #[error("the name or password is wrong")]
    BadCredentials,
    #[error(
        "the name or enrolment code is wrong, or the code was used or has expired; ask an administrator for a new one"
    )]
    BadEnrolment,
    #[error("the name or recovery code is wrong")]
    BadRecovery,
    #[error("too many failed attempts; try again in {}", rate_limit::in_seconds(*.0))]
    RateLimited(Duration),
    #[error("this account's key record cannot be used: {0}. Restore the data directory from a backup.")]
    KeyRecord(CryptoError),
    #[error("this account's private file cannot be used: {0}. Restore the data directory from a backup.")]
    PrivateFile(&'static str),
    #[error("{0}")]
    Supervision(String),
    #[error("you do not supervise this person")]
    NotSupervisor,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for AccountError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NameTaken => Self::NameTaken,
            StoreError::NotFound => Self::NotFound,
            StoreError::Exists => Self::Exists,
            StoreError::WrongState(why) => Self::WrongState(why),
            err @ StoreError::LastAdmin => Self::LastAdmin(err.to_string()),
            err @ StoreError::RoleInUse => Self::RoleInUse(err.to_string()),
            StoreError::WrongFile(why) => Self::PrivateFile(why),
            other => Self::Store(other),
        }
    }
}

/// The accounts service; cheap to clone.
#[derive(Clone)]
pub struct Accounts {
    inner: Arc<Inner>,
}

struct Inner {
    system: SystemStore,
    users_dir: PathBuf,
    sessions: Sessions,
    limiter: RateLimiter,
    unlocks: Semaphore,
    policy: KdfPolicy,
    target: OnceCell<KdfParams>,
    /// Taken for reading while a private file is opened, and for writing while a backup
    /// copies one: a file is never opened (and migrated) half-way through its copy.
    files: tokio::sync::RwLock<()>,
}

impl Accounts {
    pub fn new(system: SystemStore, users_dir: PathBuf, policy: KdfPolicy) -> Self {
        let inner = Inner {
            system,
            users_dir,
            sessions: Sessions::default(),
            limiter: RateLimiter::default(),
            unlocks: Semaphore::new(CONCURRENT_UNLOCKS),
            policy,
            target: OnceCell::new(),
            files: tokio::sync::RwLock::new(()),
        };
        Self { inner: Arc::new(inner) }
    }

    pub fn sessions(&self) -> &Sessions {
        &self.inner.sessions
    }

    pub fn system(&self) -> &SystemStore {
        &self.inner.system
    }

    /// Holds every private file closed to new openers until dropped (a backup's copy).
    pub async fn hold_files(&self) -> tokio::sync::RwLockWriteGuard<'_, ()> {
        self.inner.files.write().await
    }

    /// Where the private files live.
    pub fn users_dir_path(&self) -> &std::path::Path {
        &self.inner.users_dir
    }

    fn users_dir(&self) -> &std::path::Path {
        &self.inner.users_dir
    }

    /// The login picker: everyone but the deactivated.
    pub async fn directory(&self) -> Result<Vec<PublicUser>, AccountError> {
        let rows = user_rows::list(&self.inner.system).await?;
        Ok(rows.iter().filter(|r| r.status != "deactivated").map(PublicUser::from).collect())
    }

    /// Creates the first administrator with their own password, and unlocks them.
    pub async fn setup(&self, name: &str, password: &str) -> Result<Unlocked, AccountError> {
        let name = valid_name(name)?;
        check_password(password, &name)?;
        if !user_rows::list(&self.inner.system).await?.is_empty() {
            return Err(AccountError::AlreadySetUp);
        }
        let role = roles::first_managing(&self.inner.system).await?.ok_or(AccountError::UnknownRole("admin".into()))?;
        let id = UserId::generate();
        let made = self.make_keys(&id, password).await?;
        let inserted = user_rows::insert_first(&self.inner.system, &name, &role, &made.activation(&id)).await;
        if !matches!(inserted, Ok(true)) {
            made.discard(&self.inner.users_dir, &id).await;
            inserted?;
            return Err(AccountError::AlreadySetUp);
        }
        tracing::info!(user = %id, "first administrator created");
        let user = PublicUser { id: id.clone(), name, role: role.clone(), status: "active".into() };
        self.unlock_made(user, made, &role).await
    }

    /// Adds a person who will choose their own password; returns the one-time code.
    pub async fn add_person(
        &self,
        actor: &Actor,
        name: &str,
        role: &RoleId,
    ) -> Result<(PublicUser, Zeroizing<String>), AccountError> {
        let name = valid_name(name)?;
        if roles::get(&self.inner.system, role).await?.is_none() {
            return Err(AccountError::UnknownRole(role.to_string()));
        }
        let id = UserId::generate();
        let code = crypto::human_code(ENROLMENT_CODE_BYTES);
        let (digest, expires) = (crypto::code_digest(&code), enrolment_expiry());
        user_rows::insert_pending(&self.inner.system, actor, &id, &name, role, &digest, &expires).await?;
        tracing::info!(user = %id, "person added, awaiting enrolment");
        Ok((PublicUser { id, name, role: role.clone(), status: "pending".into() }, code))
    }

    /// The person spends their enrolment code and chooses their password; only now are
    /// their keys and private file made.
    pub async fn enrol(&self, name: &str, code: &str, password: &str) -> Result<Unlocked, AccountError> {
        let limit_key = format!("enrol/{}", name.trim().to_lowercase());
        let row = self.pending_enrolment(name, code).await?;
        let digest = crypto::code_digest(code);
        check_password(password, &row.name)?;
        let made = self.make_keys(&row.id, password).await?;
        match user_rows::activate(&self.inner.system, &digest, &made.activation(&row.id)).await {
            Ok(true) => {}
            other => {
                made.discard(&self.inner.users_dir, &row.id).await;
                other?;
                return Err(AccountError::BadEnrolment);
            }
        }
        self.inner.limiter.succeeded(&limit_key);
        tracing::info!(user = %row.id, "enrolled");
        // The edges the account was made with take the new key now, as the enrolment
        // screen said they would.
        let sealed = self.seal_at_enrolment(&row.id, &made.dek).await?;
        if sealed > 0 {
            tracing::info!(user = %row.id, sealed, "supervision made at enrolment");
        }
        let user = PublicUser { status: "active".into(), ..PublicUser::from(&row) };
        self.unlock_made(user, made, &row.role_id).await
    }

    /// A pending account whose enrolment code is right and unexpired; attempts are limited
    /// as enrolments are.
    async fn pending_enrolment(&self, name: &str, code: &str) -> Result<UserRow, AccountError> {
        let limit_key = format!("enrol/{}", name.trim().to_lowercase());
        self.check_limit(&limit_key)?;
        let row = user_rows::find_by_name(&self.inner.system, name.trim()).await?;
        let digest = crypto::code_digest(code);
        let valid = row.as_ref().is_some_and(|r| {
            r.status == "pending"
                && r.enrolment_digest.as_deref().is_some_and(|d| subtle::ConstantTimeEq::ct_eq(d, &digest[..]).into())
                && r.enrolment_expires.as_deref().is_some_and(not_expired)
        });
        row.filter(|_| valid).ok_or(AccountError::BadEnrolment)
    }

    /// Takes back the attempt a right enrolment code counted.
    fn enrolment_attempt_succeeded(&self, name: &str) {
        self.inner.limiter.succeeded(&format!("enrol/{}", name.trim().to_lowercase()));
    }

    /// Unlocks a person's space with their password.
    pub async fn login(&self, name: &str, password: &str) -> Result<Unlocked, AccountError> {
        let limit_key = format!("login/{}", name.trim().to_lowercase());
        self.check_limit(&limit_key)?;
        let target = self.kdf_target().await?;
        let row = user_rows::find_by_name(&self.inner.system, name.trim()).await?.filter(|r| r.status == "active");
        let Some(row) = row else {
            // Cost the same as a wrong password, so timing does not tell who exists.
            let secret = Zeroizing::new(password.as_bytes().to_vec());
            self.blocking(move || crypto::burn_kdf(&secret, &target)).await;
            return Err(AccountError::BadCredentials);
        };
        let wrapped = self.wrap_of(&row, Purpose::Password).await?;
        let dek = self.unwrap_typed(&limit_key, &wrapped, password, &row.id, Purpose::Password).await?;
        let space = self.open_space(&row, &dek).await?;
        // A record made with weaker parameters than this machine's target is re-wrapped
        // upward now that the password is at hand; never downward.
        let header = wrapped.header().map_err(AccountError::KeyRecord)?;
        if target.strictly_stronger_than(&header.kdf) {
            let rewrapped = self.wrap(&dek, password.as_bytes(), &row.id, Purpose::Password, target).await?;
            user_rows::replace_wraps(&self.inner.system, &row.id, &[(Purpose::Password, &rewrapped)]).await?;
            tracing::info!(user = %row.id, from = %header.kdf, to = %target, "key re-wrapped with stronger parameters");
        }
        self.start_session(PublicUser::from(&row), space, dek, &row.role_id, None).await
    }

    /// Opens a space with the recovery code, sets a new password, and replaces the
    /// recovery code (the old one stops working).
    pub async fn recover(&self, name: &str, code: &str, new_password: &str) -> Result<Unlocked, AccountError> {
        let limit_key = format!("recover/{}", name.trim().to_lowercase());
        self.check_limit(&limit_key)?;
        let row = user_rows::find_by_name(&self.inner.system, name.trim()).await?.filter(|r| r.status == "active");
        let Some(row) = row else {
            // Recovery wraps use the floor cost; spend it so timing does not tell who exists.
            let secret = Zeroizing::new(code.as_bytes().to_vec());
            self.blocking(move || crypto::burn_kdf(&secret, &KdfParams::FLOOR)).await;
            return Err(AccountError::BadRecovery);
        };
        check_password(new_password, &row.name)?;
        let wrapped = self.wrap_of(&row, Purpose::Recovery).await?;
        let normalized = crypto::normalize_code(code);
        let dek = self.unwrap_typed(&limit_key, &wrapped, &normalized, &row.id, Purpose::Recovery).await?;
        let space = self.open_space(&row, &dek).await?;
        let target = self.kdf_target().await?;
        let new_code = crypto::human_code(RECOVERY_CODE_BYTES);
        let password_wrap = self.wrap(&dek, new_password.as_bytes(), &row.id, Purpose::Password, target).await?;
        let recovery_wrap = self
            .wrap(&dek, crypto::normalize_code(&new_code).as_bytes(), &row.id, Purpose::Recovery, KdfParams::FLOOR)
            .await?;
        user_rows::replace_wraps(
            &self.inner.system,
            &row.id,
            &[(Purpose::Password, &password_wrap), (Purpose::Recovery, &recovery_wrap)],
        )
        .await?;
        tracing::info!(user = %row.id, "password reset with the recovery code; a new code was issued");
        let unlocked = self.start_session(PublicUser::from(&row), space, dek, &row.role_id, Some(new_code)).await?;
        let ended = self.inner.sessions.end_user_except(&row.id, unlocked.token.as_bytes()).await;
        if ended > 0 {
            tracing::info!(user = %row.id, ended, "other sessions ended after a recovery");
        }
        Ok(unlocked)
    }

    /// Re-wraps the DEK under a new password, in one transaction, and ends every other
    /// session of the person (all but the one whose bearer is `keep`); nothing else changes.
    pub async fn change_password(
        &self,
        user_id: &UserId,
        current: &str,
        new: &str,
        keep: &[u8],
    ) -> Result<(), AccountError> {
        let row = user_rows::find(&self.inner.system, user_id).await?.ok_or(AccountError::BadCredentials)?;
        let limit_key = format!("login/{}", row.name.to_lowercase());
        self.check_limit(&limit_key)?;
        check_password(new, &row.name)?;
        let wrapped = self.wrap_of(&row, Purpose::Password).await?;
        let dek = self.unwrap_typed(&limit_key, &wrapped, current, &row.id, Purpose::Password).await?;
        let target = self.kdf_target().await?;
        let rewrapped = self.wrap(&dek, new.as_bytes(), &row.id, Purpose::Password, target).await?;
        user_rows::replace_wraps(&self.inner.system, &row.id, &[(Purpose::Password, &rewrapped)]).await?;
        let ended = self.inner.sessions.end_user_except(&row.id, keep).await;
        tracing::info!(user = %row.id, ended, "password changed; the person's other sessions ended");
        Ok(())
    }

    /// Checks a person's current password against their key record, rate-limited like a
    /// login.
    pub(crate) async fn check_password_of(&self, row: &UserRow, password: &str) -> Result<(), AccountError> {
        let limit_key = format!("login/{}", row.name.to_lowercase());
        self.check_limit(&limit_key)?;
        let wrapped = self.wrap_of(row, Purpose::Password).await?;
        self.unwrap_typed(&limit_key, &wrapped, password, &row.id, Purpose::Password).await.map(drop)
    }

    /// The argon2id parameters for new wraps: calibrated once per instance and stored.
    pub async fn kdf_target(&self) -> Result<KdfParams, AccountError> {
        let system = self.inner.system.clone();
        let policy = self.inner.policy;
        let target = self
            .inner
            .target
            .get_or_try_init(|| async move {
                if policy == KdfPolicy::Floor {
                    return Ok(KdfParams::FLOOR);
                }
                if let Some(stored) = user_rows::kdf_target(&system).await?.filter(KdfParams::in_range) {
                    return Ok(stored);
                }
                let calibrated = tokio::task::spawn_blocking(|| crypto::calibrate(KDF_TARGET))
                    .await
                    .expect("calibration does not panic");
                tracing::info!(params = %calibrated, "argon2id calibrated for this machine");
                user_rows::set_kdf_target(&system, calibrated).await?;
                Ok::<_, StoreError>(calibrated)
            })
            .await?;
        Ok(*target)
    }

    /// Begins an attempt against `key`'s limit, counted before the secret is tried: only
    /// a success (`limiter.succeeded`) takes it back.
    fn check_limit(&self, key: &str) -> Result<(), AccountError> {
        self.inner.limiter.attempt(key).map_err(AccountError::RateLimited)
    }

    /// Runs key derivation off the async threads, at most a few at a time.
    async fn blocking<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> T {
        let _permit = self.inner.unlocks.acquire().await.expect("the unlock semaphore is never closed");
        tokio::task::spawn_blocking(work).await.expect("key derivation does not panic")
    }

    /// Opens a wrap with a secret a person typed (its attempt against `limit_key` already
    /// counted): a right one takes the count back, a wrong one reads as wrong credentials;
    /// a broken record is reported as such.
    async fn unwrap_typed(
        &self,
        limit_key: &str,
        wrapped: &WrappedKey,
        secret: &str,
        id: &UserId,
        purpose: Purpose,
    ) -> Result<Dek, AccountError> {
        match self.unwrap(wrapped, secret, id, purpose).await {
            Ok(dek) => {
                self.inner.limiter.succeeded(limit_key);
                Ok(dek)
            }
            Err(CryptoError::WrongSecret) => Err(match purpose {
                Purpose::Password => AccountError::BadCredentials,
                Purpose::Recovery => AccountError::BadRecovery,
            }),
            Err(other) => {
                tracing::warn!(user = %id, error = %other, "key record refused");
                Err(AccountError::KeyRecord(other))
            }
        }
    }

    async fn unwrap(
        &self,
        wrapped: &WrappedKey,
        secret: &str,
        id: &UserId,
        purpose: Purpose,
    ) -> Result<Dek, CryptoError> {
        let (wrapped, secret, id) = (wrapped.clone(), Zeroizing::new(secret.as_bytes().to_vec()), id.clone());
        self.blocking(move || crypto::unwrap(&wrapped, &secret, id.as_str(), purpose)).await
    }

    async fn wrap(
        &self,
        dek: &Dek,
        secret: &[u8],
        id: &UserId,
        purpose: Purpose,
        kdf: KdfParams,
    ) -> Result<WrappedKey, AccountError> {
        let dek = dek.duplicate();
        let (secret, id) = (Zeroizing::new(secret.to_vec()), id.clone());
        self.blocking(move || crypto::wrap(&dek, &secret, id.as_str(), purpose, kdf, 1))
            .await
            .map_err(AccountError::KeyRecord)
    }

    async fn wrap_of(&self, row: &UserRow, purpose: Purpose) -> Result<WrappedKey, AccountError> {
        user_rows::wrap(&self.inner.system, &row.id, purpose)
            .await?
            .ok_or(AccountError::KeyRecord(CryptoError::Malformed("the key record is missing")))
    }

    async fn open_space(&self, row: &UserRow, dek: &Dek) -> Result<PrivateStore, AccountError> {
        let salt: [u8; 16] = row
            .file_salt
            .as_deref()
            .and_then(|s| s.try_into().ok())
            .ok_or(AccountError::PrivateFile("no private file is recorded for this account"))?;
        let path = private::path_for(&self.inner.users_dir, &row.id);
        let _reading = self.inner.files.read().await;
        if private::settle_rotation(&path, &salt).unwrap_or(false) {
            tracing::info!(user = %row.id, "a key rotation cut short was finished");
        }
        PrivateStore::open(&path, dek, &salt, &row.id).await.map_err(|err| {
            tracing::warn!(user = %row.id, error = %err, "private file refused");
            AccountError::from(err)
        })
    }

    /// Everything a new account needs, made before any row changes: DEK, both wraps, key
    /// pair, and the private file itself.
    async fn make_keys(&self, id: &UserId, password: &str) -> Result<MadeKeys, AccountError> {
        let target = self.kdf_target().await?;
        let dek = Dek::generate();
        let recovery_code = crypto::human_code(RECOVERY_CODE_BYTES);
        let password_wrap = self.wrap(&dek, password.as_bytes(), id, Purpose::Password, target).await?;
        let recovery_wrap = self
            .wrap(&dek, crypto::normalize_code(&recovery_code).as_bytes(), id, Purpose::Recovery, KdfParams::FLOOR)
            .await?;
        let keys = KeyPair::generate();
        let file_salt = crypto::file_salt();
        let path = private::path_for(&self.inner.users_dir, id);
        let space = PrivateStore::create(&path, &dek, &file_salt, id, &keys).await?;
        Ok(MadeKeys { dek, recovery_code, password_wrap, recovery_wrap, public_key: keys.public, file_salt, space })
    }

    async fn unlock_made(&self, user: PublicUser, made: MadeKeys, role: &RoleId) -> Result<Unlocked, AccountError> {
        let MadeKeys { dek, recovery_code, space, .. } = made;
        self.start_session(user, space, dek, role, Some(recovery_code)).await
    }

    async fn start_session(
        &self,
        user: PublicUser,
        space: PrivateStore,
        dek: Dek,
        role: &RoleId,
        recovery_code: Option<Zeroizing<String>>,
    ) -> Result<Unlocked, AccountError> {
        let role = roles::get(&self.inner.system, role).await?;
        let minutes = role.as_ref().map_or(30, |r| r.idle_timeout_minutes);
        let lock_on_close = role.as_ref().is_none_or(|r| r.lock_on_close);
        let idle = Duration::from_secs(60 * minutes.clamp(1, 1440) as u64);
        let token = self.inner.sessions.insert(Session::new(user.id.clone(), space, dek, idle, lock_on_close));
        Ok(Unlocked { user, token, recovery_code })
    }
}

struct MadeKeys {
    dek: Dek,
    recovery_code: Zeroizing<String>,
    password_wrap: WrappedKey,
    recovery_wrap: WrappedKey,
    public_key: [u8; 32],
    file_salt: [u8; 16],
    space: PrivateStore,
}

impl MadeKeys {
    fn activation<'a>(&'a self, id: &'a UserId) -> Activation<'a> {
        Activation {
            id,
            file_salt: &self.file_salt,
            public_key: &self.public_key,
            password_wrap: &self.password_wrap,
            recovery_wrap: &self.recovery_wrap,
        }
    }

    /// Undoes a creation whose row was not written: close and remove the new file.
    async fn discard(self, users_dir: &std::path::Path, id: &UserId) {
        self.space.close().await;
        private::remove_with_logs(&private::path_for(users_dir, id));
    }
}

/// When an enrolment code made now stops working.
fn enrolment_expiry() -> String {
    (time::OffsetDateTime::now_utc() + ENROLMENT_VALIDITY)
        .format(&time::format_description::well_known::Rfc3339)
        .expect("UTC timestamps format")
}

fn valid_name(name: &str) -> Result<String, AccountError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(AccountError::InvalidName("a name is needed"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(AccountError::InvalidName("use a name of at most 40 characters"));
    }
    if name.chars().any(char::is_control) {
        return Err(AccountError::InvalidName("a name cannot contain control characters"));
    }
    Ok(name.to_owned())
}

fn check_password(password: &str, name: &str) -> Result<(), AccountError> {
    match password::weakness(password, name) {
        Some(why) => Err(AccountError::WeakPassword(why)),
        None => Ok(()),
    }
}

fn not_expired(expires: &str) -> bool {
    time::OffsetDateTime::parse(expires, &time::format_description::well_known::Rfc3339)
        .is_ok_and(|at| at > time::OffsetDateTime::now_utc())
}
