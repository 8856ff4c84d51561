//! What a read needs besides the query: the connection, how to open another one, the schema,
//! the path (for messages) and how values are decoded.

use super::access::Source;
use super::connect::query_err;
use crate::decode::Decoding;
use crate::model::SchemaInfo;
use crate::StoreError;
use flashback_codec::DecodeCache;
use rusqlite::Connection;

/// What a read needs besides the query: the connection, how to open another one, the schema,
/// and the path (for messages).
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub(super) conn: &'a Connection,
    pub(super) source: &'a Source,
    pub(super) schema: &'a SchemaInfo,
    pub(super) path: &'a str,
    pub(super) dec: &'a Decoding,
}

impl Ctx<'_> {
    pub(super) fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        query_err(self.path)
    }

    /// A decode cache for one read, within the store's budget.
    pub(super) fn cache(&self) -> DecodeCache {
        self.dec.cache()
    }
}
