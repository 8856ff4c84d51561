//! The one serde seam, as LangGraph's `SerializerProtocol` (`dumps_typed`) wrapped by its
//! `EncryptedSerializer`: a [`Serde`] knows the database's [`Dialect`] and the key, and turns
//! every value a writer stores into its `(type, bytes)` row — checked, encoded in the
//! dialect's format (msgpack, or LangGraph.js's JSON) and sealed with the key when there is
//! one — on both backends and in both schemas. It also measures a value as the database
//! stores it. No writer matches on the dialect or seals by itself.

use crate::layout::Dialect;
use crate::saver::check_storable;
use crate::{jsformat, StoreError};
use flashback_codec::{encode_typed, AesKey, Decoded};

/// How values are stored: the dialect's serde, sealed with `key` when there is one.
#[derive(Clone, Copy)]
pub struct Serde<'a> {
    /// Python's msgpack or LangGraph.js's JSON.
    pub dialect: Dialect,
    /// Values written are encrypted with it (`EncryptedSerializer`), if any.
    pub key: Option<&'a AesKey>,
}

impl<'a> Serde<'a> {
    /// The serde of a database in `dialect`, sealing with `key`.
    pub fn new(dialect: Dialect, key: Option<&'a AesKey>) -> Self {
        Serde { dialect, key }
    }

    /// Python's serde (the three-table store, which only Python's format uses).
    pub fn python(key: Option<&'a AesKey>) -> Self {
        Serde::new(Dialect::Python, key)
    }

    /// `dumps_typed`: the `(type, bytes)` row of a value written to `channel` — refused when
    /// the database's program could not read it back ([`check_storable`]), then encoded and
    /// sealed.
    pub fn dumps_typed(
        &self,
        channel: &str,
        value: &Decoded,
    ) -> Result<(String, Vec<u8>), StoreError> {
        check_storable(channel, value, self.dialect)?;
        let (tag, bytes) = match self.dialect {
            Dialect::Js => jsformat::value(channel, value)?,
            Dialect::Python => encode_typed(value),
        };
        Ok(self.seal(tag, bytes))
    }

    /// A serialized document or value sealed with the key (unchanged without one, and for
    /// `empty` rows, which Python never passes through the serializer).
    pub fn seal(&self, tag: String, bytes: Vec<u8>) -> (String, Vec<u8>) {
        match self.key {
            Some(k) => k.seal(tag, bytes),
            None => (tag, bytes),
        }
    }

    /// A value's size as the database stores it (before sealing): its msgpack, or
    /// LangGraph.js's JSON (msgpack for a value JSON has no form for).
    pub fn stored_len(&self, value: &Decoded) -> usize {
        match self.dialect {
            Dialect::Js => match flashback_codec::jsvalue::encode(value) {
                Ok((_, bytes)) => bytes.len(),
                Err(_) => encode_typed(value).1.len(),
            },
            Dialect::Python => encode_typed(value).1.len(),
        }
    }
}
