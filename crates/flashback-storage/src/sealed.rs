//! Databases written with LangGraph's `EncryptedSerializer`: telling them apart cheaply.
//!
//! Whether a database is encrypted is a property of the program that wrote it, so the newest
//! rows tell: [`EncryptionProbe`] looks at the serde tags of a bounded number of the most
//! recent checkpoint and write rows (never a scan of a large table), and keeps one small
//! encrypted value to check a key against before it is used.

use crate::StoreError;
use flashback_codec::cipher::{cipher_of, unsupported, AES, KEY_ENV};
use flashback_codec::{AesKey, CipherError};

/// How many of the newest rows of each table a probe looks at.
pub const PROBE_ROWS: i64 = 200;

/// What the newest rows of a database say about encryption.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncryptionProbe {
    /// The encrypted serde tags seen (`msgpack+aes`, …), sorted.
    pub tags: Vec<String>,
    /// Whether plaintext serde values were seen beside encrypted ones.
    pub mixed: bool,
    /// The smallest `+aes` value seen, `(tag, payload)`, to check a key against (values of
    /// other ciphers cannot be opened with any key).
    pub sample: Option<(String, Vec<u8>)>,
}

impl EncryptionProbe {
    /// Whether the database is written encrypted.
    pub fn encrypted(&self) -> bool {
        !self.tags.is_empty()
    }

    /// The ciphers seen (`aes`, `kms`…), sorted.
    pub fn ciphers(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .tags
            .iter()
            .filter_map(|t| cipher_of(t))
            .map(str::to_owned)
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The ciphers seen that Flashback cannot open with any key (all but `aes`).
    pub fn unopenable(&self) -> Vec<String> {
        self.ciphers().into_iter().filter(|c| c != AES).collect()
    }

    /// Check `key` against the sample: `Ok` when it opens it (or there is nothing to check).
    pub fn check(&self, key: &AesKey) -> Result<(), CipherError> {
        match &self.sample {
            Some((tag, payload)) => key.open(tag, payload).map(|_| ()),
            None => Ok(()),
        }
    }

    /// Fold in one row's serde tag and value.
    pub(crate) fn add(&mut self, tag: &str, payload: Option<Vec<u8>>) {
        if !flashback_codec::cipher::is_encrypted(tag) {
            // `empty` (Postgres' sentinel) is not serde output and never encrypted.
            self.mixed |= tag != "empty";
            return;
        }
        if !self.tags.iter().any(|t| t == tag) {
            self.tags.push(tag.to_owned());
            self.tags.sort();
        }
        if let Some(p) = payload.filter(|_| cipher_of(tag) == Some(AES)) {
            let smaller = self.sample.as_ref().is_none_or(|(_, s)| p.len() < s.len());
            if smaller {
                self.sample = Some((tag.to_owned(), p));
            }
        }
    }

    /// Finish: `mixed` only means something when there is encryption.
    pub(crate) fn done(mut self) -> Self {
        self.mixed &= self.encrypted();
        self
    }
}

/// Why values sealed with `ciphers` (the ciphers of parts left locked) stayed locked: "sealed
/// with `kms`, a cipher Flashback cannot open (…)", or, for `aes`, that no key opened them.
pub fn locked_reason(ciphers: &[String]) -> String {
    let foreign: Vec<String> = ciphers.iter().filter(|c| *c != AES).cloned().collect();
    if foreign.is_empty() {
        format!("encrypted (`{AES}`) and no key was given to open them (set {KEY_ENV})")
    } else {
        unsupported(&foreign)
    }
}

/// The refusal of a write (fork, merge, copy, repair) whose source `what` holds values sealed
/// with `ciphers` that stayed locked: Flashback does not write what it could not read.
pub fn sealed_source(what: &str, ciphers: &[String]) -> StoreError {
    StoreError::Sealed(format!(
        "{what}: its values are {}; Flashback does not write what it cannot read, so nothing \
         was written",
        locked_reason(ciphers)
    ))
}
