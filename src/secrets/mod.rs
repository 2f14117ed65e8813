//! Instance secrets (§4): the instance key that encrypts instance-wide secrets, such as
//! shared provider API keys, in the shared database. It lives in the OS keyring; where no
//! keyring service is usable, in a 0600 file in the data directory, and the administrator
//! is told so. Which of the two holds it is recorded in the shared database, together
//! with a value sealed under the key: a keyring that later loses the entry, or hands back
//! another key, makes the secrets unavailable with recovery steps. Skald never silently
//! switches backend or makes a new key over existing secrets.

mod key_file;
mod os_keyring;

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::crypto::{CryptoError, InstanceKey};
use crate::store::{StoreError, SystemStore, instance};
pub use key_file::KeyFile;
pub use os_keyring::OsKeyring;

/// Where an instance key can live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "SecretsBackend")]
pub enum Backend {
    Keyring,
    File,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Keyring => "keyring",
            Self::File => "file",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "keyring" => Some(Self::Keyring),
            "file" => Some(Self::File),
            _ => None,
        }
    }
}

/// A place that can hold the instance key. Implementations block (D-Bus, files): call
/// them from a blocking thread.
pub trait KeyStore: Send + Sync {
    /// `Ok(None)` when the store is reachable and holds no key.
    fn load(&self) -> Result<Option<InstanceKey>, String>;
    fn save(&self, key: &InstanceKey) -> Result<(), String>;
}

/// What the administrator is told about instance secrets.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "SecretsStatus")]
pub struct Status {
    pub backend: Option<Backend>,
    pub available: bool,
    /// A plain sentence: why the file is used, or what went wrong and how to recover.
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    #[error("instance secrets are unavailable: {0}")]
    Unavailable(String),
    #[error("a stored secret does not open: {0}")]
    Crypto(#[from] CryptoError),
}

/// Why the instance secrets could not even be looked at (the shared database failed, or
/// a new key could be kept nowhere). A missing or wrong key is not this: it is a status.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write the instance key file: {0}")]
    KeyFile(String),
}

/// What a provider's sealed key is bound to, so a key blob cannot be moved to another row.
pub fn key_purpose(provider_id: &str) -> String {
    format!("provider:{provider_id}")
}

/// The instance key, if it could be loaded; cheap to clone.
#[derive(Clone)]
pub struct InstanceSecrets {
    inner: Arc<Loaded>,
}

struct Loaded {
    key: Option<InstanceKey>,
    status: Status,
    instance_id: String,
}

const CHECK_PLAIN: &[u8] = b"skald instance key check";

impl InstanceSecrets {
    /// Loads the recorded key, or makes and records one on a new instance: the keyring
    /// first, the key file where no keyring works.
    pub async fn load(system: &SystemStore, data_dir: &Path) -> Result<Self, LoadError> {
        let instance_id = instance::instance_id(system).await?;
        let keyring: Arc<dyn KeyStore> = Arc::new(OsKeyring::new(&instance_id));
        let file: Arc<dyn KeyStore> = Arc::new(KeyFile::new(data_dir));
        Self::load_with(system, &instance_id, keyring, file).await
    }

    /// As [`Self::load`], with the two stores given (tests pass their own).
    pub async fn load_with(
        system: &SystemStore,
        instance_id: &str,
        keyring: Arc<dyn KeyStore>,
        file: Arc<dyn KeyStore>,
    ) -> Result<Self, LoadError> {
        let recorded = instance::secret_backend(system).await?;
        let context = check_context(instance_id);
        let (key, status) = match recorded {
            None => {
                let (backend, key, message) = blocking(move || first_key(keyring.as_ref(), file.as_ref())).await?;
                instance::record_secret_backend(system, backend.as_str(), &key.seal(CHECK_PLAIN, &context)).await?;
                tracing::info!(backend = backend.as_str(), "instance key made");
                (Some(key), Status { backend: Some(backend), available: true, message })
            }
            Some((name, check)) => {
                let backend = Backend::parse(&name).unwrap_or(Backend::Keyring);
                let store = if backend == Backend::Keyring { keyring } else { file };
                let loaded = blocking(move || store.load()).await;
                settle(backend, loaded, &check, &context)
            }
        };
        if !status.available {
            tracing::error!(message = %status.message, "instance secrets unavailable");
        }
        Ok(Self { inner: Arc::new(Loaded { key, status, instance_id: instance_id.to_owned() }) })
    }

    pub fn status(&self) -> Status {
        self.inner.status.clone()
    }

    /// Seals an instance-wide secret; `purpose` names what it is (e.g. `provider:<id>`).
    pub fn seal(&self, plain: &[u8], purpose: &str) -> Result<Vec<u8>, SecretsError> {
        Ok(self.key()?.seal(plain, &self.context(purpose)))
    }

    pub fn open(&self, blob: &[u8], purpose: &str) -> Result<zeroize::Zeroizing<Vec<u8>>, SecretsError> {
        Ok(self.key()?.open(blob, &self.context(purpose))?)
    }

    fn key(&self) -> Result<&InstanceKey, SecretsError> {
        self.inner.key.as_ref().ok_or_else(|| SecretsError::Unavailable(self.inner.status.message.clone()))
    }

    fn context(&self, purpose: &str) -> Vec<u8> {
        format!("skald/instance-secret/v1\0{}\0{purpose}", self.inner.instance_id).into_bytes()
    }
}

fn check_context(instance_id: &str) -> Vec<u8> {
    format!("skald/instance-check/v1\0{instance_id}").into_bytes()
}

async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work).await.expect("key store calls do not panic")
}

/// A new instance: a fresh key in the keyring if it keeps it, else in the key file.
fn first_key(keyring: &dyn KeyStore, file: &dyn KeyStore) -> Result<(Backend, InstanceKey, String), LoadError> {
    let key = InstanceKey::generate();
    let round_trip = keyring.save(&key).and_then(|()| keyring.load());
    match round_trip {
        Ok(Some(back)) if back.as_bytes() == key.as_bytes() => {
            Ok((Backend::Keyring, key, "the instance key is kept in the OS keyring".into()))
        }
        outcome => {
            let why = match outcome {
                Err(err) => err,
                _ => "the keyring did not return the key it was given".into(),
            };
            file.save(&key).map_err(LoadError::KeyFile)?;
            let message = format!(
                "no usable OS keyring ({why}); the instance key is kept in a file readable only by this account in the \
                 data directory, so anyone who copies the data directory can decrypt shared provider keys"
            );
            tracing::warn!("{message}");
            Ok((Backend::File, key, message))
        }
    }
}

/// A recorded backend: the key must be there and must be the one recorded.
fn settle(
    backend: Backend,
    loaded: Result<Option<InstanceKey>, String>,
    check: &[u8],
    context: &[u8],
) -> (Option<InstanceKey>, Status) {
    let unavailable = |message: String| (None, Status { backend: Some(backend), available: false, message });
    let place = match backend {
        Backend::Keyring => "the OS keyring",
        Backend::File => "the instance key file",
    };
    let recover = "Unlock or restore it (log in to the desktop session so the keyring is unlocked, or restore the data \
                   directory together with its key from a backup), then restart Skald. Skald will not make a new key: \
                   the shared provider keys sealed with the old one would be lost, and would have to be entered again.";
    match loaded {
        Ok(Some(key)) if key.open(check, context).is_ok() => {
            let message = match backend {
                Backend::Keyring => "the instance key is kept in the OS keyring".to_owned(),
                Backend::File => "the instance key is kept in a file readable only by this account in the data \
                                  directory (no OS keyring was usable when Skald was set up)"
                    .to_owned(),
            };
            (Some(key), Status { backend: Some(backend), available: true, message })
        }
        Ok(Some(_)) => {
            unavailable(format!("{place} holds a different key than the one this instance was set up with. {recover}"))
        }
        Ok(None) => unavailable(format!("{place} no longer holds this instance's key. {recover}")),
        Err(err) => unavailable(format!("{place} cannot be reached ({err}). {recover}")),
    }
}
