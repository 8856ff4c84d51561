//! msgpack ⇄ [`Value`], with LangGraph's extension types.
//!
//! The decoder accepts every msgpack form; the encoder always writes the minimal form, which is
//! what Python's `ormsgpack` writes, so `encode(decode(b)) == b` for every document Python
//! produced (tested over every blob of the fixtures).

mod ext;
mod reader;
pub mod scan;
#[cfg(test)]
mod tests;
mod writer;

pub use reader::{
    check, decode, decode_with_cache, is_invalid_str, raw_parts, top_level_str, ArrayIndex,
    RawParts,
};
pub use writer::{encode, encode_into, write_array_header, write_map_header};

use crate::budget::{DecodeBudget, TooLargeReason};
use crate::value::Value;
use std::collections::HashMap;
use thiserror::Error;
use xxhash_rust::xxh3::Xxh3Builder;

/// Nesting deeper than this is rejected instead of overflowing the stack.
pub const MAX_DEPTH: usize = 256;

/// Why a msgpack document could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid msgpack at byte {offset}: {message}")]
pub struct MsgpackError {
    /// Byte offset where decoding stopped.
    pub offset: usize,
    /// What was wrong.
    pub message: String,
}

/// Ext payloads at least this long are worth looking up in a [`DecodeCache`].
const CACHE_MIN_LEN: usize = 48;

/// Remembers decoded Python objects by their exact ext bytes, so the same object met again
/// (in SQLite every checkpoint stores the whole state: a thread of n steps holds each message
/// up to n times) is decoded once and shared. Identical bytes always decode to the same value,
/// so sharing is exact. Use one cache for a batch of related documents, then drop it.
///
/// A cache also carries the [`DecodeBudget`] of the read it serves (unlimited by default), and
/// what that read has decoded so far.
#[derive(Debug, Default)]
pub struct DecodeCache {
    by_code: [HashMap<Box<[u8]>, Value, Xxh3Builder>; 6],
    /// `json` values: revived `lc` envelopes by their exact JSON text (see
    /// [`crate::jsvalue::revive_cached`]).
    pub(crate) envelopes: HashMap<Box<[u8]>, Value, Xxh3Builder>,
    budget: Option<DecodeBudget>,
    spent: u64,
    key: Option<std::sync::Arc<crate::cipher::AesKey>>,
}

impl DecodeCache {
    /// An empty cache with no budget.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache for a read limited by `budget`.
    pub fn with_budget(budget: DecodeBudget) -> Self {
        DecodeCache {
            budget: Some(budget),
            ..Self::default()
        }
    }

    /// The same cache decrypting `+aes` values with `key` (see [`crate::cipher`]).
    pub fn with_key(mut self, key: Option<std::sync::Arc<crate::cipher::AesKey>>) -> Self {
        self.key = key;
        self
    }

    /// The key for encrypted values, if any.
    pub fn key(&self) -> Option<std::sync::Arc<crate::cipher::AesKey>> {
        self.key.clone()
    }

    /// Give back what [`charge`](Self::charge) took for `bytes` (a ciphertext whose
    /// plaintext is charged instead).
    pub fn refund(&mut self, bytes: u64) {
        self.spent = self.spent.saturating_sub(bytes);
    }

    /// Account for decoding a value of `bytes`: `None` when it may be decoded, else why not.
    pub fn charge(&mut self, bytes: u64) -> Option<TooLargeReason> {
        let b = self.budget?;
        if b.value_too_large(bytes) {
            return Some(TooLargeReason::Value);
        }
        if b.request_exhausted(self.spent, bytes) {
            return Some(TooLargeReason::Request);
        }
        self.spent += bytes;
        None
    }
}
