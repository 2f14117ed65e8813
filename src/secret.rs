//! Bearer secrets held by the running process. The launch token is made fresh at each
//! start (§7); it lives in a zeroizing buffer, has no `Debug`, and is compared in
//! constant time so a caller cannot learn it byte by byte from response timing.

use std::sync::Arc;

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

/// A random 256-bit token rendered as 64 lowercase hex characters.
#[derive(Clone)]
pub struct LaunchToken(Arc<Zeroizing<String>>);

impl LaunchToken {
    pub fn generate() -> Self {
        let mut bytes = Zeroizing::new([0u8; 32]);
        getrandom::fill(bytes.as_mut()).expect("the OS random source is unavailable");
        Self(Arc::new(Zeroizing::new(hex::encode(bytes.as_ref()))))
    }

    /// The token's text, for the ready line, the token file and the desktop shell.
    pub fn expose(&self) -> &str {
        self.0.as_str()
    }

    pub fn matches(&self, presented: &[u8]) -> bool {
        self.0.as_bytes().ct_eq(presented).into()
    }
}
