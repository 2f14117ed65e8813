//! The OS keyring through the Secret Service (GNOME Keyring, KWallet) over D-Bus. One entry
//! per instance, so two data directories on one account never share a key.

use super::KeyStore;
use crate::crypto::InstanceKey;

const SERVICE: &str = "skald";

pub struct OsKeyring {
    account: String,
}

impl OsKeyring {
    pub fn new(instance_id: &str) -> Self {
        Self { account: format!("instance-key-{instance_id}") }
    }

    fn entry(&self) -> Result<keyring::Entry, String> {
        keyring::Entry::new(SERVICE, &self.account).map_err(|err| err.to_string())
    }
}

impl KeyStore for OsKeyring {
    fn load(&self) -> Result<Option<InstanceKey>, String> {
        match self.entry()?.get_secret() {
            Ok(bytes) => {
                InstanceKey::from_bytes(&bytes).map(Some).ok_or_else(|| "the keyring entry is not a 32-byte key".into())
            }
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(err) => Err(err.to_string()),
        }
    }

    fn save(&self, key: &InstanceKey) -> Result<(), String> {
        self.entry()?.set_secret(key.as_bytes()).map_err(|err| err.to_string())
    }
}
