//! Measuring inside a msgpack checkpoint document without decoding its values: the encoded
//! length of each value of `channel_values` (LangGraph's SQLite schema keeps them inline), and
//! the `channel_versions` that name a three-table checkpoint's blob rows.

use flashback_codec::msgpack::{self, RawParts};

/// The key's text, if it is a msgpack string.
fn key(raw: &[u8]) -> Option<String> {
    msgpack::decode(raw).ok()?.as_str().map(str::to_owned)
}

/// The stored value of `name` in a top-level map.
fn field<'a>(doc: &'a [u8], name: &str) -> Result<Option<&'a [u8]>, String> {
    let RawParts::Map(entries) = msgpack::raw_parts(doc).map_err(|e| e.to_string())? else {
        return Err("the document is not a map".into());
    };
    Ok(entries
        .into_iter()
        .find(|(k, _)| key(k).as_deref() == Some(name))
        .map(|(_, v)| v))
}

/// Each channel value's stored bytes in the document (`type` must be plain msgpack).
pub(crate) fn inline_values<'a>(
    tag: &str,
    doc: &'a [u8],
) -> Result<Vec<(String, &'a [u8])>, String> {
    if tag != "msgpack" {
        return Err(format!("the document is stored as {tag:?}, not msgpack"));
    }
    let Some(values) = field(doc, "channel_values")? else {
        return Ok(Vec::new());
    };
    match msgpack::raw_parts(values).map_err(|e| e.to_string())? {
        RawParts::Map(entries) => Ok(entries
            .into_iter()
            .map(|(k, v)| {
                let name = key(k).unwrap_or_else(|| "?".into());
                (name, v)
            })
            .collect()),
        _ => Err("channel_values is not a map".into()),
    }
}

/// `channel_versions` as the blob rows' version text.
pub(crate) fn versions(tag: &str, doc: &[u8]) -> Result<Vec<(String, String)>, String> {
    if tag != "msgpack" {
        return Err(format!("the document is stored as {tag:?}, not msgpack"));
    }
    let value = msgpack::decode(doc).map_err(|e| e.to_string())?;
    let cp = crate::decode::checkpoint_from_msgpack(value)?;
    Ok(cp
        .channel_versions
        .iter()
        .map(|(c, v)| (c.clone(), crate::three::rows::version_text(v)))
        .collect())
}
