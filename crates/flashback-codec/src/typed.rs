//! Serde type tags: `(type, bytes)` pairs as stored by LangGraph's savers ⇄ [`Decoded`].

pub use crate::decoded::Decoded;
use crate::msgpack;

/// Decode a `(type, bytes)` pair the way `JsonPlusSerializer.loads_typed` would, without
/// importing or executing anything. A SQL NULL payload is passed as `None`.
pub fn decode_typed(tag: &str, data: Option<&[u8]>) -> Decoded {
    decode_typed_inner(tag, data, None, None)
}

/// [`decode_typed`] decrypting `+aes` values with `key` (see [`crate::cipher`]).
pub fn decode_typed_keyed(
    tag: &str,
    data: Option<&[u8]>,
    key: Option<&crate::cipher::AesKey>,
) -> Decoded {
    decode_typed_inner(tag, data, None, key)
}

/// [`decode_typed`] sharing decoded objects through `cache` (see [`msgpack::DecodeCache`]).
pub fn decode_typed_cached(
    tag: &str,
    data: Option<&[u8]>,
    cache: &mut msgpack::DecodeCache,
) -> Decoded {
    let key = cache.key();
    decode_typed_inner(tag, data, Some(cache), key.as_deref())
}

fn decode_typed_inner(
    tag: &str,
    data: Option<&[u8]>,
    mut cache: Option<&mut msgpack::DecodeCache>,
    key: Option<&crate::cipher::AesKey>,
) -> Decoded {
    let bytes = data.unwrap_or_default();
    if let Some(c) = cache.as_deref_mut() {
        if let Some(reason) = c.charge(bytes.len() as u64) {
            let kind = crate::budget::kind_for(tag, bytes);
            return crate::budget::too_large(tag, bytes.len() as u64, kind, reason);
        }
    }
    let error = |message: String| Decoded::Error {
        tag: tag.to_owned(),
        message,
        raw: bytes.to_vec(),
    };
    match tag {
        "null" => Decoded::Null,
        "empty" => Decoded::Empty,
        "bytes" => Decoded::Bytes(bytes.to_vec()),
        "bytearray" => Decoded::ByteArray(bytes.to_vec()),
        "pickle" => Decoded::Pickle(bytes.to_vec()),
        "msgpack" => match data {
            None => error("msgpack value is SQL NULL".into()),
            Some(b) => match match cache {
                Some(c) => msgpack::decode_with_cache(b, c),
                None => msgpack::decode(b),
            } {
                Ok(v) => Decoded::Msgpack(v),
                Err(e) => error(e.to_string()),
            },
        },
        "json" => {
            let revived = match cache {
                // Envelopes met before in the read are shared, not revived again.
                Some(c) => crate::jsvalue::revive_cached(bytes, c),
                None => crate::jsvalue::revive_text(bytes),
            };
            match revived {
                Ok(v) => Decoded::from(v),
                Err(e) => error(e.to_string()),
            }
        }
        t if t.contains('+') => match key.map(|k| k.open(t, bytes)) {
            Some(Ok((inner, plain))) => {
                if let Some(c) = cache.as_deref_mut() {
                    // The plaintext is charged instead of its ciphertext.
                    c.refund(bytes.len() as u64);
                }
                match decode_typed_inner(&inner, Some(&plain), cache, None) {
                    // A value over the budget keeps the tag it is stored under.
                    Decoded::TooLarge {
                        bytes,
                        kind,
                        reason,
                        ..
                    } => Decoded::TooLarge {
                        tag: t.to_owned(),
                        bytes,
                        kind,
                        reason,
                    },
                    Decoded::Error { message, .. } => error(message),
                    d => d,
                }
            }
            Some(Err(crate::cipher::CipherError::Unsupported(_))) | None => Decoded::Encrypted {
                tag: t.to_owned(),
                data: bytes.to_vec(),
            },
            Some(Err(e)) => error(format!("cannot decrypt: {e}")),
        },
        other => error(format!(
            "unknown serde type tag {}",
            crate::describe::quoted(other, crate::describe::MAX_NAME_CHARS)
        )),
    }
}

/// Encode back to `(type, bytes)` in Python's format. For every value Python wrote as
/// `msgpack`, this gives the stored bytes; a `json` value is written as `msgpack` (what Python
/// writes today). A LangGraph.js database is written with [`crate::jsvalue::encode`] instead.
pub fn encode_typed(value: &Decoded) -> (String, Vec<u8>) {
    match value {
        Decoded::Msgpack(v) => ("msgpack".into(), msgpack::encode(v)),
        Decoded::Null => ("null".into(), Vec::new()),
        Decoded::Bytes(b) => ("bytes".into(), b.clone()),
        Decoded::ByteArray(b) => ("bytearray".into(), b.clone()),
        Decoded::Pickle(b) => ("pickle".into(), b.clone()),
        Decoded::Encrypted { tag, data } => (tag.clone(), data.clone()),
        Decoded::Empty => ("empty".into(), Vec::new()),
        Decoded::Error { tag, raw, .. } => (tag.clone(), raw.clone()),
        // Never written: writers read with no budget, and `check_storable` refuses one.
        Decoded::TooLarge { tag, .. } => (tag.clone(), Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_decode_and_round_trip() {
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("null", vec![]),
            ("bytes", b"\x00\xffraw".to_vec()),
            ("bytearray", b"abc".to_vec()),
            ("msgpack", vec![0x92, 0x01, 0xa1, b'x']),
            ("pickle", b"\x80\x04K\x01.".to_vec()),
            ("msgpack+aes", vec![7; 40]),
            ("null+aes", vec![1; 32]),
        ];
        for (tag, bytes) in cases {
            let d = decode_typed(tag, Some(&bytes));
            assert!(!matches!(d, Decoded::Error { .. }), "{tag} decodes: {d:?}");
            assert_eq!(
                encode_typed(&d),
                (tag.to_string(), bytes),
                "{tag} round-trips"
            );
        }
    }

    #[test]
    fn bad_values_become_errors_that_keep_their_bytes() {
        for (tag, bytes) in [
            ("msgpack", vec![0x93, 0x01]),
            ("json", b"{not json".to_vec()),
            ("dict", b"whatever".to_vec()),
        ] {
            let d = decode_typed(tag, Some(&bytes));
            let Decoded::Error { message, raw, .. } = &d else {
                panic!("{tag}: expected an error, got {d:?}");
            };
            assert!(!message.is_empty(), "{tag}: message");
            assert_eq!(raw, &bytes, "{tag}: bytes kept");
            assert_eq!(
                encode_typed(&d),
                (tag.to_string(), bytes),
                "{tag}: round trip"
            );
        }
        assert!(matches!(decode_typed("empty", None), Decoded::Empty));
        assert!(matches!(
            decode_typed("msgpack", None),
            Decoded::Error { .. }
        ));
    }
}
