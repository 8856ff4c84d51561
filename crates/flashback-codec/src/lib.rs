//! # flashback-codec
//!
//! Decodes the values LangGraph's checkpoint savers store — natively, without Python, and
//! without importing or executing anything a blob names — and encodes them back byte for byte.
//!
//! ```text
//!  (type tag, bytes) ──decode_typed──▶ Decoded ──view_decoded──▶ JSON view
//!        ▲                               │  (Msgpack(Value) tree keeps Python
//!        └──────────encode_typed─────────┘   module.Name, exact ints, f64)
//! ```
//!
//! * **Serde tags** ([`typed`]): `msgpack`, `null`, `bytes`, `bytearray`, `json` (LangGraph.js,
//!   and Python's 2024 legacy format: lc:1 / lc:2 envelopes revived by [`jsvalue`]), `pickle` (read by [`pickle`] without importing or running anything, shown as the same object stored as msgpack), `empty` (Postgres sentinel),
//!   `<inner>+<cipher>` (EncryptedSerializer: with an [`AesKey`], `+aes` values are decrypted
//!   natively ([`cipher`]); without one they stay [`Decoded::Encrypted`]). An unknown
//!   tag or a corrupt payload becomes [`Decoded::Error`], which keeps the bytes.
//! * **msgpack** ([`msgpack`]): every msgpack form is accepted; ext codes 0–5 (Python objects),
//!   6 (numpy) and 7 (DeltaChannel snapshot) become typed nodes; anything else is kept as
//!   [`Value::RawExt`] with the reason. The encoder writes the minimal forms Python's `ormsgpack`
//!   writes (fixint → uint8…64 for non-negative ints, negative fixint → int8…64, float64, minimal
//!   str/bin/array/map headers, fixext for payloads of 1/2/4/8/16 bytes), so every document
//!   Python wrote round-trips byte-identically. Non-minimal forms from other writers are
//!   normalised on re-encoding.
//! * **JSON view** ([`view`]): JSON-native values stay as they are; Python objects become
//!   `{"$type": "module.Name", …}` with `$value` (single-argument forms), `$args` (positional
//!   forms) or their fields (keyword forms: pydantic, dataclasses, messages, Interrupt…); bytes
//!   become `{"$type": "builtins.bytes", "base64": …}`; dicts with non-string keys become
//!   `{"$type": "builtins.dict", "$items": [[k, v], …]}`; what cannot be decoded becomes
//!   `{"$error": …, "$type": …, "raw_base64": …}`. The full table is in `docs/json-view.md`.

#![deny(missing_docs)]

pub mod budget;
pub mod cipher;
mod decoded;
pub mod delta;
pub mod describe;
pub mod jsvalue;
pub mod legacy;
pub mod msgpack;
mod numpy;
pub mod pickle;
pub mod reserved;
pub mod slimjson;
pub mod typed;
pub mod units;
pub mod unview;
pub mod value;
pub mod view;

pub use budget::{DecodeBudget, TooLargeReason};
pub use cipher::{AesKey, CipherError};
pub use msgpack::DecodeCache;
pub use typed::{decode_typed, decode_typed_cached, decode_typed_keyed, encode_typed, Decoded};
pub use value::{JsonText, JsonTextKind, NdArray, ObjectForm, PyObject, RawExt, Value};
pub use view::{view, view_decoded, JsonView, ViewOptions};
