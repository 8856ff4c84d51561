//! LangGraph's `EncryptedSerializer` with its built-in pycryptodome AES cipher, natively.
//!
//! `EncryptedSerializer.from_pycryptodome_aes()` stores `(f"{inner}+aes", payload)` where the
//! payload is `nonce (16 bytes) ‖ tag (16 bytes) ‖ ciphertext`, AES in EAX mode (authenticated)
//! with a 16-, 24- or 32-byte key; by default the key is the UTF-8 bytes of the environment
//! variable `LANGGRAPH_AES_KEY`. Only serde output is encrypted: metadata and Postgres' inline
//! primitives stay plaintext, and values whose tag has no `+` are read as plaintext (Python
//! accepts them silently).
//!
//! An [`AesKey`] never prints its bytes (`Debug` is redacted) and wipes them when dropped.

use aes::{Aes128, Aes192, Aes256};
use eax::aead::{AeadInPlace, KeyInit};
use eax::Eax;
use thiserror::Error;
use zeroize::Zeroizing;

/// The environment variable LangGraph reads the AES key from.
pub const KEY_ENV: &str = "LANGGRAPH_AES_KEY";

/// The cipher name pycryptodome's cipher writes after the `+`.
pub const AES: &str = "aes";

const NONCE: usize = 16;
const TAG: usize = 16;

/// Why a key or a value could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CipherError {
    /// The key is not 16, 24 or 32 bytes long.
    #[error("an AES key is 16, 24 or 32 bytes long; this one is {0} bytes")]
    KeyLength(usize),
    /// The value names a cipher other than pycryptodome's AES.
    #[error("it is {}", unsupported(std::slice::from_ref(.0)))]
    Unsupported(String),
    /// The payload is shorter than its nonce and tag.
    #[error("it is {0} bytes long, shorter than an AES-EAX nonce and tag (32 bytes)")]
    Truncated(usize),
    /// Authentication failed: the key is wrong or the value was altered.
    #[error("it does not decrypt with this key: the key is wrong or the value was altered")]
    Authentication,
}

/// An AES key (16, 24 or 32 bytes), wiped from memory when dropped.
#[derive(Clone, PartialEq, Eq)]
pub struct AesKey(Zeroizing<Vec<u8>>);

impl std::fmt::Debug for AesKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AesKey({} bytes, redacted)", self.0.len())
    }
}

impl AesKey {
    /// A key from its bytes.
    pub fn new(bytes: &[u8]) -> Result<AesKey, CipherError> {
        match bytes.len() {
            16 | 24 | 32 => Ok(AesKey(Zeroizing::new(bytes.to_vec()))),
            n => Err(CipherError::KeyLength(n)),
        }
    }

    /// A key as LangGraph takes it from `LANGGRAPH_AES_KEY`: the text's UTF-8 bytes.
    pub fn from_text(text: &str) -> Result<AesKey, CipherError> {
        AesKey::new(text.as_bytes())
    }

    /// The key in `LANGGRAPH_AES_KEY`: `None` when the variable is unset or empty.
    pub fn from_env() -> Option<Result<AesKey, CipherError>> {
        let text = Zeroizing::new(std::env::var(KEY_ENV).ok()?);
        (!text.is_empty()).then(|| AesKey::from_text(&text))
    }

    /// Decrypt a `nonce ‖ tag ‖ ciphertext` payload.
    pub fn decrypt(&self, payload: &[u8]) -> Result<Vec<u8>, CipherError> {
        if payload.len() < NONCE + TAG {
            return Err(CipherError::Truncated(payload.len()));
        }
        let (nonce, rest) = payload.split_at(NONCE);
        let (tag, ciphertext) = rest.split_at(TAG);
        let mut buf = ciphertext.to_vec();
        let nonce: [u8; NONCE] = nonce.try_into().map_err(|_| CipherError::Truncated(0))?;
        let tag: [u8; TAG] = tag.try_into().map_err(|_| CipherError::Truncated(0))?;
        let (nonce, tag) = (&nonce.into(), &tag.into());
        let ok = match self.0.len() {
            16 => Eax::<Aes128>::new_from_slice(&self.0)
                .map(|c| c.decrypt_in_place_detached(nonce, b"", &mut buf, tag)),
            24 => Eax::<Aes192>::new_from_slice(&self.0)
                .map(|c| c.decrypt_in_place_detached(nonce, b"", &mut buf, tag)),
            _ => Eax::<Aes256>::new_from_slice(&self.0)
                .map(|c| c.decrypt_in_place_detached(nonce, b"", &mut buf, tag)),
        };
        match ok {
            Ok(Ok(())) => Ok(buf),
            _ => Err(CipherError::Authentication),
        }
    }

    /// Encrypt as pycryptodome does with a fresh random nonce: `nonce ‖ tag ‖ ciphertext`.
    pub fn encrypt(&self, plaintext: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; NONCE];
        // The OS's generator; without one there is no safe nonce, and nothing to fall back to.
        getrandom::getrandom(&mut nonce).expect("the OS random number generator is available");
        self.encrypt_with_nonce(plaintext, &nonce)
    }

    /// [`encrypt`](Self::encrypt) with a given nonce (tests compare with pycryptodome's output).
    pub fn encrypt_with_nonce(&self, plaintext: &[u8], nonce: &[u8; NONCE]) -> Vec<u8> {
        let mut buf = plaintext.to_vec();
        let n = &(*nonce).into();
        let tag = match self.0.len() {
            16 => Eax::<Aes128>::new_from_slice(&self.0)
                .ok()
                .and_then(|c| c.encrypt_in_place_detached(n, b"", &mut buf).ok()),
            24 => Eax::<Aes192>::new_from_slice(&self.0)
                .ok()
                .and_then(|c| c.encrypt_in_place_detached(n, b"", &mut buf).ok()),
            _ => Eax::<Aes256>::new_from_slice(&self.0)
                .ok()
                .and_then(|c| c.encrypt_in_place_detached(n, b"", &mut buf).ok()),
        }
        .expect("a checked key length and an in-memory buffer always encrypt");
        let mut out = Vec::with_capacity(NONCE + TAG + buf.len());
        out.extend_from_slice(nonce);
        out.extend_from_slice(&tag);
        out.extend_from_slice(&buf);
        out
    }

    /// Open a stored `(tag, payload)`: `Ok((inner tag, plaintext))`, or why not.
    pub fn open(&self, tag: &str, payload: &[u8]) -> Result<(String, Vec<u8>), CipherError> {
        let Some((inner, cipher)) = split_tag(tag) else {
            return Ok((tag.to_owned(), payload.to_vec()));
        };
        if cipher != AES {
            return Err(CipherError::Unsupported(cipher.to_owned()));
        }
        Ok((inner.to_owned(), self.decrypt(payload)?))
    }

    /// Seal a `(tag, bytes)` pair as `EncryptedSerializer.dumps_typed` would. Pairs that are
    /// already encrypted (copied undecrypted) and the Postgres `empty` sentinel (never serde
    /// output) are returned as they are.
    pub fn seal(&self, tag: String, bytes: Vec<u8>) -> (String, Vec<u8>) {
        if tag.contains('+') || tag == "empty" {
            return (tag, bytes);
        }
        let payload = self.encrypt(&bytes);
        (format!("{tag}+{AES}"), payload)
    }
}

/// The one wording of values sealed with ciphers Flashback cannot open (`EncryptedSerializer`
/// with a custom `CipherProtocol`): "sealed with `kms`, a cipher Flashback cannot open (it
/// opens LangGraph's `aes` only)".
pub fn unsupported(ciphers: &[String]) -> String {
    let names: Vec<String> = ciphers.iter().map(|c| format!("`{c}`")).collect();
    let what = match names.len() {
        1 => "a cipher",
        _ => "ciphers",
    };
    format!(
        "sealed with {}, {what} Flashback cannot open (it opens LangGraph's `{AES}` only)",
        names.join(", ")
    )
}

/// The cipher of a stored serde tag: `msgpack+kms` → `kms`; `None` when it is not encrypted.
pub fn cipher_of(tag: &str) -> Option<&str> {
    split_tag(tag).map(|(_, c)| c)
}

/// `msgpack+aes` → `("msgpack", "aes")`; a tag without `+` → `None`.
pub fn split_tag(tag: &str) -> Option<(&str, &str)> {
    tag.split_once('+')
}

/// Whether a stored serde tag is encrypted.
pub fn is_encrypted(tag: &str) -> bool {
    tag.contains('+')
}

/// The SHA-256 of a payload, in hex (how exports name a ciphertext they do not open).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_16_24_or_32_bytes() {
        for n in [16, 24, 32] {
            assert!(AesKey::new(&vec![1; n]).is_ok());
        }
        for n in [0, 15, 17, 31, 33, 64] {
            assert_eq!(AesKey::new(&vec![1; n]), Err(CipherError::KeyLength(n)));
        }
        let key = AesKey::from_text("0123456789abcdef").unwrap();
        assert!(
            !format!("{key:?}").contains("0123"),
            "Debug never shows the key"
        );
    }

    #[test]
    fn round_trips_and_authenticates() {
        for n in [16, 24, 32] {
            let key = AesKey::new(&vec![7; n]).unwrap();
            let sealed = key.encrypt(b"\x81\xa1a\x01");
            assert_eq!(sealed.len(), 32 + 4);
            assert_eq!(key.decrypt(&sealed).unwrap(), b"\x81\xa1a\x01");
            let mut tampered = sealed.clone();
            *tampered.last_mut().unwrap() ^= 1;
            assert_eq!(key.decrypt(&tampered), Err(CipherError::Authentication));
            let other = AesKey::new(&vec![8; n]).unwrap();
            assert_eq!(other.decrypt(&sealed), Err(CipherError::Authentication));
            assert_eq!(key.decrypt(&sealed[..31]), Err(CipherError::Truncated(31)));
        }
    }

    #[test]
    fn matches_pycryptodome() {
        // AES.new(b"0123456789abcdef", AES.MODE_EAX, nonce=bytes(range(16)))
        //    .encrypt_and_digest(b"hello") with pycryptodome: nonce + tag + ciphertext.
        let key = AesKey::from_text("0123456789abcdef").unwrap();
        let nonce: [u8; 16] = std::array::from_fn(|i| i as u8);
        let sealed = key.encrypt_with_nonce(b"hello", &nonce);
        assert_eq!(hex(&sealed), PYCRYPTODOME_HELLO);
        assert_eq!(key.decrypt(&sealed).unwrap(), b"hello");
    }

    const PYCRYPTODOME_HELLO: &str =
        "000102030405060708090a0b0c0d0e0f2d7e8b5c34c9aa3369c0c9d12ee7fa496721bd8ab3";

    fn hex(b: &[u8]) -> String {
        b.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn seal_and_open() {
        let key = AesKey::new(&[3; 32]).unwrap();
        let (tag, payload) = key.seal("msgpack".into(), vec![0x90]);
        assert_eq!(tag, "msgpack+aes");
        assert_eq!(
            key.open(&tag, &payload).unwrap(),
            ("msgpack".into(), vec![0x90])
        );
        assert_eq!(key.seal(tag.clone(), payload.clone()), (tag, payload));
        assert_eq!(key.seal("empty".into(), vec![]), ("empty".into(), vec![]));
        assert_eq!(
            key.open("msgpack+rot13", b"x"),
            Err(CipherError::Unsupported("rot13".into()))
        );
        assert_eq!(
            CipherError::Unsupported("kms".into()).to_string(),
            "it is sealed with `kms`, a cipher Flashback cannot open (it opens LangGraph's \
             `aes` only)"
        );
        assert_eq!(cipher_of("msgpack+kms"), Some("kms"));
        assert_eq!(cipher_of("msgpack"), None);
        assert_eq!(key.open("msgpack", b"plain").unwrap().1, b"plain");
    }
}
