//! Databases written with LangGraph's `EncryptedSerializer`: telling them apart cheaply.
//!
//! Whether a database is encrypted is a property of the program that wrote it, so the newest
//! rows tell: [`EncryptionProbe`] looks at the serde tags of a bounded number of the most
//! recent checkpoint and write rows (never a scan of a large table), and keeps one small
//! encrypted value to check a key against before it is used.

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
    /// The smallest encrypted value seen, `(tag, payload)`, to check a key against.
    pub sample: Option<(String, Vec<u8>)>,
}

impl EncryptionProbe {
    /// Whether the database is written encrypted.
    pub fn encrypted(&self) -> bool {
        !self.tags.is_empty()
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
        if let Some(p) = payload {
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
