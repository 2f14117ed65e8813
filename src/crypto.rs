//! Key derivation, wrapping and sealing: the only module that touches key material (§4).
//!
//! - A person's password (or recovery code) becomes a KEK through argon2id with a random
//!   16-byte salt and parameters that are bound, with the salt, into the wrap.
//! - Each person's random 256-bit DEK is wrapped with AES-256-GCM under that KEK. The
//!   wrap is self-describing — a header naming format version, user, purpose, KDF
//!   parameters, salt and key version, then nonce and ciphertext — and the whole header is
//!   the associated data. A wrap moved to another person or purpose is refused before any
//!   KDF runs, and if its header is edited to match, the tag fails. The tag is the only
//!   password verifier: there is no password hash anywhere.
//!
//! Keys live in `Zeroizing` buffers and have no `Debug`. Pure functions: no IO, no SQL.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use argon2::{Algorithm, Argon2, Params, Version};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// The wrap layout's version; a change of layout bumps it.
const WRAP_FORMAT: u8 = 1;
const WRAP_MAGIC: &[u8; 4] = b"SKW1";
const SALT_LEN: usize = 16;
const NONCE_LEN: usize = 12;
const KEY_LEN: usize = 32;

/// Why a key operation failed. None of these carry key material.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CryptoError {
    #[error("the password or code does not open this key")]
    WrongSecret,
    #[error("the key record names another account or purpose ({found}); it may have been moved or tampered with")]
    Misbound { found: String },
    #[error("the key record's KDF parameters ({0}) are outside the allowed range; it may have been tampered with")]
    KdfOutOfRange(KdfParams),
    #[error("the key record is malformed: {0}")]
    Malformed(&'static str),
}

/// argon2id cost parameters: memory in KiB, passes, lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdfParams {
    pub m_kib: u32,
    pub t: u32,
    pub p: u32,
}

impl std::fmt::Display for KdfParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "m={} KiB, t={}, p={}", self.m_kib, self.t, self.p)
    }
}

impl KdfParams {
    /// Never below this, whatever calibration says (§4).
    pub const FLOOR: Self = Self { m_kib: 47_104, t: 1, p: 1 };
    /// Never above this: a tampered record must not be able to exhaust memory or time.
    pub const CEILING: Self = Self { m_kib: 1_048_576, t: 16, p: 16 };
    /// The starting point calibration adjusts from.
    pub const DEFAULT: Self = Self { m_kib: 65_536, t: 3, p: 4 };

    pub fn in_range(&self) -> bool {
        (Self::FLOOR.m_kib..=Self::CEILING.m_kib).contains(&self.m_kib)
            && (Self::FLOOR.t..=Self::CEILING.t).contains(&self.t)
            && (Self::FLOOR.p..=Self::CEILING.p).contains(&self.p)
            // argon2 needs at least 8 KiB per lane.
            && self.m_kib >= 8 * self.p
    }

    /// Whether `self` costs strictly more than `other` and less in no dimension, so that
    /// re-wrapping from `other` to `self` is an upgrade, never a downgrade.
    pub fn strictly_stronger_than(&self, other: &Self) -> bool {
        self.m_kib >= other.m_kib && self.t >= other.t && (self.m_kib > other.m_kib || self.t > other.t)
    }

    fn argon2(&self) -> Result<Argon2<'static>, CryptoError> {
        if !self.in_range() {
            return Err(CryptoError::KdfOutOfRange(*self));
        }
        let params =
            Params::new(self.m_kib, self.t, self.p, Some(KEY_LEN)).map_err(|_| CryptoError::KdfOutOfRange(*self))?;
        Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params))
    }
}

/// Picks parameters so one derivation takes about `target` on this machine: memory from
/// the default down to the floor if even one pass is too slow, then as many passes as fit.
pub fn calibrate(target: std::time::Duration) -> KdfParams {
    // The fastest of three runs: other work on a busy machine only ever adds time, and
    // counting it would leave the key weaker than the machine can afford.
    let probe = |params: KdfParams| {
        (0..3)
            .map(|_| {
                let started = std::time::Instant::now();
                let _ = derive_kek(b"calibration", &[0u8; SALT_LEN], &params);
                started.elapsed()
            })
            .min()
            .expect("three runs")
    };
    let mut params = KdfParams { t: 1, ..KdfParams::DEFAULT };
    let mut one_pass = probe(params);
    while one_pass > target && params.m_kib > KdfParams::FLOOR.m_kib {
        params.m_kib = (params.m_kib / 2).max(KdfParams::FLOOR.m_kib);
        one_pass = probe(params);
    }
    // One pass costs a fixed part (allocating and filling the memory) plus the pass
    // itself; the second pass tells them apart, so more passes are not over-estimated.
    let two_passes = probe(KdfParams { t: 2, ..params });
    let per_pass = two_passes.saturating_sub(one_pass).max(std::time::Duration::from_millis(1));
    let fixed = one_pass.saturating_sub(per_pass);
    let passes = (target.saturating_sub(fixed).as_secs_f64() / per_pass.as_secs_f64()).floor() as u32;
    params.t = passes.clamp(KdfParams::FLOOR.t, KdfParams::CEILING.t);
    params
}

/// A data-encryption key: the one key that opens a person's private file.
pub struct Dek(Zeroizing<[u8; KEY_LEN]>);

impl Dek {
    pub fn generate() -> Self {
        Self(random_array())
    }

    pub fn as_bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    /// A key read back from a sealed copy (§6.2); `None` unless exactly 32 bytes.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        let bytes: [u8; KEY_LEN] = bytes.try_into().ok()?;
        Some(Self(Zeroizing::new(bytes)))
    }

    /// A second handle on the same key, to move into a blocking task; zeroized on drop too.
    pub fn duplicate(&self) -> Self {
        Self(Zeroizing::new(*self.0))
    }

    /// The SQLCipher raw-key literal with an explicit salt, `"x'<key><salt>'"`, so no
    /// second KDF runs and the file's salt is the one recorded for its owner.
    pub fn sqlcipher_key(&self, file_salt: &[u8; SALT_LEN]) -> Zeroizing<String> {
        let mut hex_key = Zeroizing::new(String::with_capacity(100));
        hex_key.push_str("\"x'");
        hex_key.push_str(&hex::encode_upper(self.0.as_ref()));
        hex_key.push_str(&hex::encode_upper(file_salt));
        hex_key.push_str("'\"");
        hex_key
    }
}

/// A key-encryption key derived from a password or recovery code.
struct Kek(Zeroizing<[u8; KEY_LEN]>);

fn derive_kek(secret: &[u8], salt: &[u8; SALT_LEN], params: &KdfParams) -> Result<Kek, CryptoError> {
    let mut out = Zeroizing::new([0u8; KEY_LEN]);
    params.argon2()?.hash_password_into(secret, salt, out.as_mut()).map_err(|_| CryptoError::KdfOutOfRange(*params))?;
    Ok(Kek(out))
}

/// What a wrap is for; bound into it, so a wrap cannot be reused for another purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Password,
    Recovery,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Password => "password",
            Self::Recovery => "recovery",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "password" => Some(Self::Password),
            "recovery" => Some(Self::Recovery),
            _ => None,
        }
    }
}

/// The header of a wrap: everything bound into its associated data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrapHeader {
    pub user_id: String,
    pub purpose: Purpose,
    pub kdf: KdfParams,
    pub salt: [u8; SALT_LEN],
    pub key_version: u32,
}

impl WrapHeader {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.user_id.len());
        out.extend_from_slice(WRAP_MAGIC);
        out.push(WRAP_FORMAT);
        push_field(&mut out, self.user_id.as_bytes());
        push_field(&mut out, self.purpose.as_str().as_bytes());
        for n in [self.kdf.m_kib, self.kdf.t, self.kdf.p, self.key_version] {
            out.extend_from_slice(&n.to_be_bytes());
        }
        out.extend_from_slice(&self.salt);
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<(Self, usize), CryptoError> {
        let mut r = Reader(bytes);
        if r.take(4)? != WRAP_MAGIC || r.take(1)? != [WRAP_FORMAT] {
            return Err(CryptoError::Malformed("unknown key record format"));
        }
        let user_id = String::from_utf8(r.field()?.to_vec()).map_err(|_| CryptoError::Malformed("user id"))?;
        let purpose =
            std::str::from_utf8(r.field()?).ok().and_then(Purpose::parse).ok_or(CryptoError::Malformed("purpose"))?;
        let kdf = KdfParams { m_kib: r.u32()?, t: r.u32()?, p: r.u32()? };
        let key_version = r.u32()?;
        let salt = r.take(SALT_LEN)?.try_into().expect("length checked");
        let used = bytes.len() - r.0.len();
        Ok((Self { user_id, purpose, kdf, salt, key_version }, used))
    }
}

/// A wrapped DEK as stored: header ‖ nonce ‖ ciphertext-with-tag.
#[derive(Clone, PartialEq, Eq)]
pub struct WrappedKey(pub Vec<u8>);

impl WrappedKey {
    /// The header, readable without any secret (for `skald verify` and checks before a KDF).
    pub fn header(&self) -> Result<WrapHeader, CryptoError> {
        WrapHeader::decode(&self.0).map(|(h, _)| h)
    }
}

/// Wraps `dek` under a KEK derived from `secret` with a fresh salt and nonce.
pub fn wrap(
    dek: &Dek,
    secret: &[u8],
    user_id: &str,
    purpose: Purpose,
    kdf: KdfParams,
    key_version: u32,
) -> Result<WrappedKey, CryptoError> {
    let header =
        WrapHeader { user_id: user_id.to_owned(), purpose, kdf, salt: *random_array::<SALT_LEN>(), key_version };
    let kek = derive_kek(secret, &header.salt, &kdf)?;
    let aad = header.encode();
    let nonce: [u8; NONCE_LEN] = *random_array::<NONCE_LEN>();
    let cipher = Aes256Gcm::new_from_slice(kek.0.as_ref()).expect("32-byte key");
    let sealed = cipher
        .encrypt(Nonce::from_slice(&nonce), Payload { msg: dek.as_bytes(), aad: &aad })
        .map_err(|_| CryptoError::Malformed("encryption failed"))?;
    let mut out = aad;
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    Ok(WrappedKey(out))
}

/// Opens a wrap that must belong to `user_id` for `purpose`. The binding and the KDF
/// range are checked before the (expensive) derivation runs.
pub fn unwrap(wrapped: &WrappedKey, secret: &[u8], user_id: &str, purpose: Purpose) -> Result<Dek, CryptoError> {
    let (header, used) = WrapHeader::decode(&wrapped.0)?;
    if header.user_id != user_id || header.purpose != purpose {
        return Err(CryptoError::Misbound { found: format!("{} / {}", header.user_id, header.purpose.as_str()) });
    }
    if !header.kdf.in_range() {
        return Err(CryptoError::KdfOutOfRange(header.kdf));
    }
    let rest = &wrapped.0[used..];
    if rest.len() != NONCE_LEN + KEY_LEN + 16 {
        return Err(CryptoError::Malformed("ciphertext length"));
    }
    let (nonce, sealed) = rest.split_at(NONCE_LEN);
    let kek = derive_kek(secret, &header.salt, &header.kdf)?;
    let cipher = Aes256Gcm::new_from_slice(kek.0.as_ref()).expect("32-byte key");
    let plain = Zeroizing::new(
        cipher
            .decrypt(Nonce::from_slice(nonce), Payload { msg: sealed, aad: &wrapped.0[..used] })
            .map_err(|_| CryptoError::WrongSecret)?,
    );
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    key.copy_from_slice(&plain);
    Ok(Dek(key))
}

/// Runs one derivation and throws it away, so that a login for an unknown person costs
/// the same time as one for a known person with a wrong password.
pub fn burn_kdf(secret: &[u8], params: &KdfParams) {
    let _ = derive_kek(secret, &[0u8; SALT_LEN], params);
}

/// An X25519 key pair; the secret half is kept only inside its owner's encrypted file.
pub struct KeyPair {
    pub secret: Zeroizing<[u8; 32]>,
    pub public: [u8; 32],
}

impl KeyPair {
    pub fn generate() -> Self {
        let secret = x25519_dalek::StaticSecret::from(*random_array::<32>());
        let public = x25519_dalek::PublicKey::from(&secret).to_bytes();
        Self { secret: Zeroizing::new(secret.to_bytes()), public }
    }
}

/// What a value sealed to a public key starts with: the layout's version.
const SEALED_MAGIC: &[u8; 4] = b"SKS1";

/// Seals `plain` so that only the holder of the secret half of `public` can open it (an
/// ephemeral X25519 key agreement, HKDF-SHA256, AES-256-GCM). `context` — what it is, for
/// whom — is bound as associated data, so a sealed value moved elsewhere fails to open.
/// Layout: magic, the ephemeral public key, nonce, ciphertext with its tag.
pub fn seal_to(public: &[u8; 32], plain: &[u8], context: &[u8]) -> Vec<u8> {
    let ephemeral = x25519_dalek::StaticSecret::from(*random_array::<32>());
    let ephemeral_public = x25519_dalek::PublicKey::from(&ephemeral).to_bytes();
    let shared = ephemeral.diffie_hellman(&x25519_dalek::PublicKey::from(*public));
    let key = sealing_key(shared.as_bytes(), &ephemeral_public, public);
    let nonce: [u8; NONCE_LEN] = *random_array::<NONCE_LEN>();
    let cipher = Aes256Gcm::new_from_slice(key.as_ref()).expect("32-byte key");
    let sealed = cipher
        .encrypt(Nonce::from_slice(&nonce), Payload { msg: plain, aad: context })
        .expect("AES-GCM encryption of a small value cannot fail");
    [SEALED_MAGIC.as_slice(), &ephemeral_public, &nonce, &sealed].concat()
}

/// Opens a value [`seal_to`] sealed to the public half of `secret`, for `context`.
pub fn open_sealed(secret: &[u8; 32], blob: &[u8], context: &[u8]) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
    let header = SEALED_MAGIC.len() + 32 + NONCE_LEN;
    if blob.len() < header + 16 || !blob.starts_with(SEALED_MAGIC) {
        return Err(CryptoError::Malformed("not a sealed value"));
    }
    let ephemeral_public: [u8; 32] = blob[SEALED_MAGIC.len()..][..32].try_into().expect("32 bytes");
    let nonce = &blob[SEALED_MAGIC.len() + 32..header];
    let secret = x25519_dalek::StaticSecret::from(*secret);
    let public = x25519_dalek::PublicKey::from(&secret).to_bytes();
    let shared = secret.diffie_hellman(&x25519_dalek::PublicKey::from(ephemeral_public));
    // A low-order ephemeral key would make the agreement all zeros, known to anyone.
    if !shared.was_contributory() {
        return Err(CryptoError::Malformed("the sealed value's key agreement is degenerate"));
    }
    let key = sealing_key(shared.as_bytes(), &ephemeral_public, &public);
    let cipher = Aes256Gcm::new_from_slice(key.as_ref()).expect("32-byte key");
    cipher
        .decrypt(Nonce::from_slice(nonce), Payload { msg: &blob[header..], aad: context })
        .map(Zeroizing::new)
        .map_err(|_| CryptoError::WrongSecret)
}

/// The AES key of one sealed value: both public keys bind it to this agreement.
fn sealing_key(shared: &[u8; 32], ephemeral_public: &[u8; 32], public: &[u8; 32]) -> Zeroizing<[u8; KEY_LEN]> {
    let salt = [ephemeral_public.as_slice(), public].concat();
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    hkdf::Hkdf::<Sha256>::new(Some(&salt), shared)
        .expand(b"skald sealed value v1", key.as_mut())
        .expect("32 bytes is a valid HKDF-SHA256 length");
    key
}

/// The instance key: encrypts instance-wide secrets (shared provider API keys) in the
/// shared database. Kept in the OS keyring or a 0600 file, never in the database.
pub struct InstanceKey(Zeroizing<[u8; KEY_LEN]>);

impl InstanceKey {
    pub fn generate() -> Self {
        Self(random_array())
    }

    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let bytes: [u8; KEY_LEN] = bytes.try_into().ok()?;
        Some(Self(Zeroizing::new(bytes)))
    }

    pub fn as_bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    /// Seals `plain` with a fresh nonce; `context` (what it is, for which instance) is bound
    /// as associated data, so a blob moved to another purpose fails to open.
    pub fn seal(&self, plain: &[u8], context: &[u8]) -> Vec<u8> {
        let nonce: [u8; NONCE_LEN] = *random_array::<NONCE_LEN>();
        let cipher = Aes256Gcm::new_from_slice(self.0.as_ref()).expect("32-byte key");
        let sealed = cipher
            .encrypt(Nonce::from_slice(&nonce), Payload { msg: plain, aad: context })
            .expect("AES-GCM encryption of a small value cannot fail");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        out
    }

    pub fn open(&self, blob: &[u8], context: &[u8]) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
        if blob.len() < NONCE_LEN + 16 {
            return Err(CryptoError::Malformed("sealed value too short"));
        }
        let (nonce, sealed) = blob.split_at(NONCE_LEN);
        let cipher = Aes256Gcm::new_from_slice(self.0.as_ref()).expect("32-byte key");
        cipher
            .decrypt(Nonce::from_slice(nonce), Payload { msg: sealed, aad: context })
            .map(Zeroizing::new)
            .map_err(|_| CryptoError::WrongSecret)
    }
}

/// The key of one backup archive (§5.1), derived from the administrator's backup
/// passphrase with argon2id, as the key wraps are. It seals the archive as a stream of
/// chunks (the STREAM construction): each chunk's nonce is the archive's random prefix,
/// the chunk's index and whether it is the last, and the archive's header is the
/// associated data of every chunk. So a chunk moved, dropped, repeated or taken from
/// another archive fails its tag, and an archive cut short lacks its last chunk.
pub struct ArchiveKey(Zeroizing<[u8; KEY_LEN]>);

/// The random part of every chunk nonce of one archive.
pub const ARCHIVE_PREFIX_LEN: usize = 7;

impl ArchiveKey {
    pub fn derive(passphrase: &[u8], salt: &[u8; SALT_LEN], kdf: &KdfParams) -> Result<Self, CryptoError> {
        Ok(Self(derive_kek(passphrase, salt, kdf)?.0))
    }

    /// A fresh salt and nonce prefix for a new archive.
    pub fn fresh_salt_and_prefix() -> ([u8; SALT_LEN], [u8; ARCHIVE_PREFIX_LEN]) {
        (*random_array::<SALT_LEN>(), *random_array::<ARCHIVE_PREFIX_LEN>())
    }

    pub fn seal_chunk(
        &self,
        prefix: &[u8; ARCHIVE_PREFIX_LEN],
        index: u32,
        last: bool,
        header: &[u8],
        plain: &[u8],
    ) -> Vec<u8> {
        let cipher = Aes256Gcm::new_from_slice(self.0.as_ref()).expect("32-byte key");
        cipher
            .encrypt(Nonce::from_slice(&chunk_nonce(prefix, index, last)), Payload { msg: plain, aad: header })
            .expect("AES-GCM encryption of a chunk cannot fail")
    }

    /// Opens chunk `index`; a wrong passphrase, an edited byte or a chunk out of place is
    /// [`CryptoError::WrongSecret`] (the tag cannot tell them apart).
    pub fn open_chunk(
        &self,
        prefix: &[u8; ARCHIVE_PREFIX_LEN],
        index: u32,
        last: bool,
        header: &[u8],
        sealed: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
        let cipher = Aes256Gcm::new_from_slice(self.0.as_ref()).expect("32-byte key");
        cipher
            .decrypt(Nonce::from_slice(&chunk_nonce(prefix, index, last)), Payload { msg: sealed, aad: header })
            .map(Zeroizing::new)
            .map_err(|_| CryptoError::WrongSecret)
    }
}

fn chunk_nonce(prefix: &[u8; ARCHIVE_PREFIX_LEN], index: u32, last: bool) -> [u8; NONCE_LEN] {
    let mut nonce = [0u8; NONCE_LEN];
    nonce[..ARCHIVE_PREFIX_LEN].copy_from_slice(prefix);
    nonce[ARCHIVE_PREFIX_LEN..NONCE_LEN - 1].copy_from_slice(&index.to_be_bytes());
    nonce[NONCE_LEN - 1] = u8::from(last);
    nonce
}

/// A random 16-byte salt for a new private file.
pub fn file_salt() -> [u8; SALT_LEN] {
    *random_array::<SALT_LEN>()
}

/// A one-time code of `bytes` random bytes, as groups of four base32 characters.
pub fn human_code(bytes: usize) -> Zeroizing<String> {
    let raw = Zeroizing::new(random_vec(bytes));
    let plain = Zeroizing::new(data_encoding::BASE32_NOPAD.encode(&raw));
    let mut grouped = Zeroizing::new(String::with_capacity(plain.len() * 5 / 4));
    for (i, c) in plain.chars().enumerate() {
        if i > 0 && i % 4 == 0 {
            grouped.push('-');
        }
        grouped.push(c);
    }
    grouped
}

/// Codes are typed by people: case, spaces and dashes do not matter.
pub fn normalize_code(code: &str) -> Zeroizing<String> {
    Zeroizing::new(code.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_uppercase()).collect())
}

/// A fast digest for high-entropy one-time codes (enrolment codes), never for passwords.
pub fn code_digest(code: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(b"skald/code/v1\0");
    hasher.update(normalize_code(code).as_bytes());
    hasher.finalize().into()
}

/// This run's launch token (§7): made fresh at each start, kept in a zeroizing buffer with
/// no `Debug`, and compared in constant time so a caller cannot learn it from timing.
#[derive(Clone)]
pub struct LaunchToken(std::sync::Arc<Zeroizing<String>>);

impl LaunchToken {
    pub fn generate() -> Self {
        Self(std::sync::Arc::new(bearer_token()))
    }

    /// The token's text, for the ready line, the token file and the desktop shell.
    pub fn expose(&self) -> &str {
        self.0.as_str()
    }

    pub fn matches(&self, presented: &[u8]) -> bool {
        subtle::ConstantTimeEq::ct_eq(self.0.as_bytes(), presented).into()
    }
}

/// A random bearer: 256 bits as 64 hex characters.
pub fn bearer_token() -> Zeroizing<String> {
    Zeroizing::new(hex::encode(*random_array::<32>()))
}

/// A digest of a bearer, so sessions are looked up without comparing secrets directly.
pub fn token_digest(token: &[u8]) -> [u8; 32] {
    Sha256::digest(token).into()
}

fn random_array<const N: usize>() -> Zeroizing<[u8; N]> {
    let mut out = Zeroizing::new([0u8; N]);
    getrandom::fill(out.as_mut()).expect("the OS random source is unavailable");
    out
}

fn random_vec(n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    getrandom::fill(&mut out).expect("the OS random source is unavailable");
    out
}

fn push_field(out: &mut Vec<u8>, field: &[u8]) {
    out.extend_from_slice(&(field.len() as u16).to_be_bytes());
    out.extend_from_slice(field);
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CryptoError> {
        if self.0.len() < n {
            return Err(CryptoError::Malformed("truncated"));
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, CryptoError> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    fn field(&mut self) -> Result<&'a [u8], CryptoError> {
        let len = u16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes")) as usize;
        self.take(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAST: KdfParams = KdfParams::FLOOR;

    #[test]
    fn a_value_sealed_to_a_public_key_opens_only_with_its_secret_and_context() {
        let (ada, bo) = (KeyPair::generate(), KeyPair::generate());
        let sealed = seal_to(&ada.public, b"bins out", b"job j1 for ada");
        assert_eq!(&open_sealed(&ada.secret, &sealed, b"job j1 for ada").unwrap()[..], b"bins out");
        assert_eq!(open_sealed(&bo.secret, &sealed, b"job j1 for ada").err(), Some(CryptoError::WrongSecret));
        assert_eq!(open_sealed(&ada.secret, &sealed, b"job j2 for ada").err(), Some(CryptoError::WrongSecret));
        for at in [4, 40, sealed.len() - 1] {
            let mut flipped = sealed.clone();
            flipped[at] ^= 1;
            assert!(open_sealed(&ada.secret, &flipped, b"job j1 for ada").is_err(), "a flip at {at} is refused");
        }
        assert!(matches!(open_sealed(&ada.secret, &sealed[..20], b"x"), Err(CryptoError::Malformed(_))));
        assert_ne!(seal_to(&ada.public, b"bins out", b"c"), seal_to(&ada.public, b"bins out", b"c"), "fresh each time");
    }

    #[test]
    fn a_sealed_value_with_a_low_order_ephemeral_key_is_refused() {
        let ada = KeyPair::generate();
        let mut sealed = seal_to(&ada.public, b"x", b"c");
        sealed[4..36].copy_from_slice(&[0u8; 32]);
        assert!(matches!(open_sealed(&ada.secret, &sealed, b"c"), Err(CryptoError::Malformed(_))));
    }

    #[test]
    fn the_right_password_opens_the_wrap_and_a_wrong_one_does_not() {
        let dek = Dek::generate();
        let w = wrap(&dek, b"correct horse", "u1", Purpose::Password, FAST, 1).unwrap();
        assert_eq!(unwrap(&w, b"correct horse", "u1", Purpose::Password).unwrap().as_bytes(), dek.as_bytes());
        assert_eq!(unwrap(&w, b"wrong", "u1", Purpose::Password).err(), Some(CryptoError::WrongSecret));
    }

    #[test]
    fn a_wrap_moved_to_another_person_or_purpose_is_refused_before_the_kdf() {
        let w = wrap(&Dek::generate(), b"pw", "alice", Purpose::Password, FAST, 1).unwrap();
        assert!(matches!(unwrap(&w, b"pw", "bob", Purpose::Password), Err(CryptoError::Misbound { .. })));
        assert!(matches!(unwrap(&w, b"pw", "alice", Purpose::Recovery), Err(CryptoError::Misbound { .. })));
    }

    #[test]
    fn a_header_edited_to_claim_another_owner_fails_the_tag() {
        let w = wrap(&Dek::generate(), b"pw", "alice", Purpose::Password, FAST, 1).unwrap();
        // Same length, so only the bound owner changes: magic (4) + format (1) + length (2).
        let mut bytes = w.0.clone();
        bytes[7..12].copy_from_slice(b"bobby");
        let edited = WrappedKey(bytes);
        assert_eq!(edited.header().unwrap().user_id, "bobby");
        assert_eq!(unwrap(&edited, b"pw", "bobby", Purpose::Password).err(), Some(CryptoError::WrongSecret));
    }

    #[test]
    fn kdf_parameters_outside_the_range_are_refused_without_deriving() {
        for (m, t, p) in [(1024, 1, 1), (47_104, 0, 1), (4_000_000, 1, 1), (65_536, 1000, 1), (65_536, 1, 64)] {
            let kdf = KdfParams { m_kib: m, t, p };
            assert!(matches!(
                wrap(&Dek::generate(), b"pw", "u", Purpose::Password, kdf, 1),
                Err(CryptoError::KdfOutOfRange(_))
            ));
        }
    }

    #[test]
    fn upgrades_are_only_ever_upward() {
        let base = KdfParams { m_kib: 65_536, t: 3, p: 4 };
        assert!(KdfParams { t: 4, ..base }.strictly_stronger_than(&base));
        assert!(!base.strictly_stronger_than(&base));
        assert!(!KdfParams { m_kib: 131_072, t: 2, p: 4 }.strictly_stronger_than(&base));
    }

    #[test]
    fn codes_are_grouped_and_typed_forgivingly() {
        let code = human_code(20);
        assert_eq!(normalize_code(&code).len(), 32, "160 bits in 32 base32 characters");
        assert_eq!(code_digest(&code.to_lowercase().replace('-', " ")), code_digest(&code));
    }

    #[test]
    fn an_instance_secret_opens_only_in_its_own_context_and_with_its_own_key() {
        let key = InstanceKey::generate();
        let blob = key.seal(b"sk-provider-key", b"provider:1");
        assert_eq!(key.open(&blob, b"provider:1").unwrap().as_slice(), b"sk-provider-key");
        assert_eq!(key.open(&blob, b"provider:2").err(), Some(CryptoError::WrongSecret));
        assert_eq!(InstanceKey::generate().open(&blob, b"provider:1").err(), Some(CryptoError::WrongSecret));
    }

    #[test]
    fn an_archive_chunk_opens_only_in_its_place_with_its_passphrase() {
        let (salt, prefix) = ArchiveKey::fresh_salt_and_prefix();
        let key = ArchiveKey::derive(b"backup passphrase", &salt, &FAST).unwrap();
        let sealed = key.seal_chunk(&prefix, 3, false, b"header", b"pages");
        assert_eq!(&key.open_chunk(&prefix, 3, false, b"header", &sealed).unwrap()[..], b"pages");
        for (index, last, header) in [(4, false, &b"header"[..]), (3, true, b"header"), (3, false, b"headex")] {
            assert!(key.open_chunk(&prefix, index, last, header, &sealed).is_err(), "{index} {last}");
        }
        let other = ArchiveKey::derive(b"another passphrase", &salt, &FAST).unwrap();
        assert_eq!(other.open_chunk(&prefix, 3, false, b"header", &sealed).err(), Some(CryptoError::WrongSecret));
        let mut flipped = sealed.clone();
        flipped[0] ^= 1;
        assert!(key.open_chunk(&prefix, 3, false, b"header", &flipped).is_err());
    }

    #[test]
    fn the_sqlcipher_key_is_the_raw_blob_form_with_the_salt() {
        let key = Dek::generate().sqlcipher_key(&[0xAB; 16]);
        assert!(key.starts_with("\"x'") && key.ends_with("AB'\""));
        assert_eq!(key.len(), 3 + 64 + 32 + 2);
    }
}
