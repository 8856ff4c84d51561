//! Measuring inside a checkpoint document without decoding its values: the stored bytes of
//! each value of `channel_values` (LangGraph's SQLite schema keeps them inline), and the
//! `channel_versions` that name a three-table checkpoint's blob rows. Msgpack documents are
//! split here; JSON ones (`json`: LangGraph.js, Python's legacy serde) in `json.rs`.

use super::pass::CpRow;
use super::sql::Layout;
use super::{json, Cell};
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

/// Each channel value's stored bytes in the document (`type`: plain msgpack or JSON).
pub(crate) fn inline_values<'a>(
    tag: &str,
    doc: &'a [u8],
) -> Result<Vec<(String, &'a [u8])>, String> {
    if tag == "json" {
        return json::inline_values(doc);
    }
    if tag != "msgpack" {
        return Err(format!(
            "the document is stored as {tag:?}, not msgpack or JSON"
        ));
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
    if tag == "json" {
        return json::versions(doc);
    }
    if tag != "msgpack" {
        return Err(format!(
            "the document is stored as {tag:?}, not msgpack or JSON"
        ));
    }
    let value = msgpack::decode(doc).map_err(|e| e.to_string())?;
    let cp = crate::decode::checkpoint_from_msgpack(value)?;
    Ok(cp
        .channel_versions
        .iter()
        .map(|(c, v)| (c.clone(), crate::three::rows::version_text(v)))
        .collect())
}

/// Where LangGraph SQLite's inline values go: `ns, checkpoint id, channel, serde type, stored
/// bytes`.
pub(crate) type InlineSink<'a> = dyn FnMut(&str, &str, &str, &str, &[u8]) + 'a;

/// A row of [`Layout::thread_checkpoints`], measured; LangGraph SQLite's inline values go to
/// `inline` (`ns, checkpoint id, channel, serde type, stored bytes`).
pub(crate) fn checkpoint_row(l: Layout, r: &[Cell], inline: &mut InlineSink<'_>) -> CpRow {
    let mut row = CpRow {
        ns_key: r[0].text(),
        ns: r[1].text(),
        id: r[2].text(),
        parent: r[3].opt_text(),
        doc_bytes: 0,
        meta_bytes: r[6].int(),
        versions: Vec::new(),
        inline: Vec::new(),
        problem: None,
    };
    let tag = r[4].text();
    let measured = match (l, &r[5]) {
        (Layout::LanggraphPostgres, doc) => {
            row.doc_bytes = doc.int();
            let pairs = |i: usize| -> Result<Vec<(String, serde_json::Value)>, String> {
                match &r[i] {
                    Cell::Text(t) => serde_json::from_str(t).map_err(|e| e.to_string()),
                    _ => Ok(Vec::new()),
                }
            };
            pairs(7).and_then(|versions| {
                row.versions = versions
                    .into_iter()
                    .map(|(c, v)| (c, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                    .collect();
                row.inline = pairs(8)?
                    .into_iter()
                    .map(|(c, n)| (c, n.as_u64().unwrap_or(0)))
                    .collect();
                Ok(())
            })
        }
        (_, Cell::Bytes(doc)) => measure(l, &tag, doc, &mut row, inline),
        // JSON text in a text column (a JSON document written as a string) is measured as its
        // UTF-8 bytes, which is what the SQL lengths count.
        (_, Cell::Text(doc)) if tag == "json" => measure(l, &tag, doc.as_bytes(), &mut row, inline),
        (_, Cell::Text(doc)) => {
            row.doc_bytes = doc.len() as u64;
            Err("the document is stored as text, not bytes".into())
        }
        (_, _) => Err("the document is missing".into()),
    };
    row.problem = measured.err();
    row
}

/// A document's inline values (LangGraph SQLite) or its versions (the three-table store); a
/// dev server's document: its versions, and its values when it holds them (before
/// langgraph-checkpoint 2.0.22).
pub(crate) fn measure(
    l: Layout,
    tag: &str,
    doc: &[u8],
    row: &mut CpRow,
    inline: &mut InlineSink<'_>,
) -> Result<(), String> {
    row.doc_bytes = doc.len() as u64;
    if l == Layout::DevServer {
        row.versions = versions(tag, doc)?;
    }
    if matches!(l, Layout::LanggraphSqlite | Layout::DevServer) {
        inline_values(tag, doc).map(|v| {
            for (channel, value) in &v {
                inline(&row.ns, &row.id, channel, tag, value);
            }
            row.inline = v.into_iter().map(|(c, b)| (c, b.len() as u64)).collect();
        })
    } else {
        versions(tag, doc).map(|v| row.versions = v)
    }
}
