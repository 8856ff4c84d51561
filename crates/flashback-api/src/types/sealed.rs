//! Encrypted databases (LangGraph's `EncryptedSerializer`): what the UI is told, and unlocking.

use serde::{Deserialize, Serialize};
use specta::Type;

/// Where the AES key in use came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// The environment variable `LANGGRAPH_AES_KEY`, as LangGraph reads it.
    Env,
    /// The OS keyring, saved for this database.
    Keyring,
    /// Typed in the app for this session.
    Typed,
}

/// A database written with LangGraph's `EncryptedSerializer` (absent for a plaintext one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct EncryptionInfo {
    /// The encrypted serde tags seen among the newest rows (`msgpack+aes`, …).
    pub tags: Vec<String>,
    /// The ciphers those tags name (`aes`, and any Flashback cannot open: `kms`…), sorted.
    #[serde(default)]
    pub ciphers: Vec<String>,
    /// Whether a key is in use (values are decrypted, and forks are written encrypted).
    pub unlocked: bool,
    /// Where that key came from.
    pub key_source: Option<KeySource>,
    /// Why the key in use does not open a value it was checked against (a wrong key: every
    /// value it cannot open is shown as an error), when it does not; or that the values are
    /// sealed with a cipher Flashback cannot open whatever the key.
    pub key_problem: Option<String>,
    /// Plaintext values were seen beside encrypted ones among the newest rows (LangGraph
    /// reads them silently).
    pub mixed: bool,
}

impl EncryptionInfo {
    /// The ciphers seen that Flashback cannot open with any key (all but `aes`).
    pub fn unopenable(&self) -> Vec<String> {
        let aes = flashback_codec::cipher::AES;
        self.ciphers.iter().filter(|c| *c != aes).cloned().collect()
    }

    /// For a database holding values of ciphers Flashback cannot open beside `aes` ones, the
    /// one sentence naming them ("sealed with `des`, a cipher Flashback cannot open …"); `None`
    /// when every cipher is `aes` (or none is: then `key_problem` names them).
    pub fn some_unopenable(&self) -> Option<String> {
        let foreign = self.unopenable();
        (!foreign.is_empty() && foreign.len() < self.ciphers.len())
            .then(|| flashback_codec::cipher::unsupported(&foreign))
    }
}

/// How one checkpoint was stored, in an encrypted database.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CheckpointSealing {
    /// Its values are encrypted and no key was given (or their cipher is not one Flashback
    /// opens): they are shown locked.
    pub locked: bool,
    /// The ciphers of what stayed locked (`aes` without a key, `kms`…), sorted.
    #[serde(default)]
    pub ciphers: Vec<String>,
    /// Parts of it stored as plaintext although the database is encrypted: `checkpoint`
    /// (SQLite's document), `channel NAME` (a Postgres blob) or `write TASK_ID CHANNEL`.
    pub plaintext: Vec<String>,
}

/// Unlock an encrypted database with its AES key.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct UnlockRequest {
    /// The database handle.
    pub db: String,
    /// The key, as `LANGGRAPH_AES_KEY` holds it (16, 24 or 32 bytes of text). Never stored
    /// in a file or a log.
    pub key: String,
    /// Save it in the OS keyring for this database.
    #[serde(default)]
    pub remember: bool,
}

impl std::fmt::Debug for UnlockRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnlockRequest")
            .field("db", &self.db)
            .field("key", &"<redacted>")
            .field("remember", &self.remember)
            .finish()
    }
}
