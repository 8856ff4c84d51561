//! [`Decoded`]: a stored value as its serde type tag says, the one type every decoder
//! ([`crate::typed`], [`crate::budget`]) returns and every view ([`crate::view`],
//! [`crate::describe`]) reads.

use crate::value::Value;

/// A stored value decoded according to its serde type tag.
///
/// Decoding never fails as a whole: what cannot be decoded becomes [`Decoded::Error`], which keeps
/// the original bytes so nothing is lost and the value still round-trips.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// A typed value: `msgpack` (the normal case), or a `json` value (LangGraph.js, Python's
    /// 2024 legacy format) revived into the same tree by [`crate::jsvalue::revive`]. Which
    /// format a value is written in is the database's, not the value's.
    Msgpack(Value),
    /// `null`: Python `None` (empty payload).
    Null,
    /// `bytes`: a top-level `bytes` value.
    Bytes(Vec<u8>),
    /// `bytearray`: a top-level `bytearray` value.
    ByteArray(Vec<u8>),
    /// `pickle`: the stored bytes (kept, so a fork writes them back unchanged); shown as what
    /// [`crate::pickle`] reads from them, never imported or run.
    Pickle(Vec<u8>),
    /// `<inner>+<cipher>` from `EncryptedSerializer`, left encrypted: no key was given, or the
    /// cipher is not pycryptodome's AES (with a key, `+aes` values decode to what they hold, and
    /// one that fails to decrypt is a [`Decoded::Error`] keeping its ciphertext).
    Encrypted {
        /// The full tag, e.g. `msgpack+aes`.
        tag: String,
        /// The ciphertext.
        data: Vec<u8>,
    },
    /// `empty`: the Postgres blob sentinel for a channel with no value.
    Empty,
    /// A value left undecoded by the [`crate::budget::DecodeBudget`]: only its size and kind.
    TooLarge {
        /// The serde type tag as stored.
        tag: String,
        /// Its stored size in bytes.
        bytes: u64,
        /// What it is (`list`, `dict`, `str`, `numpy.ndarray`, a class name…).
        kind: String,
        /// Which limit it met.
        reason: TooLargeReason,
    },
    /// Anything that could not be decoded.
    Error {
        /// The serde type tag as stored.
        tag: String,
        /// What went wrong.
        message: String,
        /// The stored bytes.
        raw: Vec<u8>,
    },
}

/// Why a value was left undecoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooLargeReason {
    /// It is over the per-value limit.
    Value,
    /// The request had decoded its allowance already.
    Request,
}

impl Decoded {
    /// The decoded msgpack value, if this is one.
    pub fn as_value(&self) -> Option<&Value> {
        match self {
            Decoded::Msgpack(v) => Some(v),
            _ => None,
        }
    }

    /// Whether the value is Python `None`.
    pub fn is_none(&self) -> bool {
        matches!(self, Decoded::Null | Decoded::Msgpack(Value::Nil))
    }
}

impl From<Value> for Decoded {
    fn from(v: Value) -> Self {
        match v {
            Value::Nil => Decoded::Null,
            v => Decoded::Msgpack(v),
        }
    }
}
