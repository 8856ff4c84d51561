//! Key columns (thread ids, namespaces, checkpoint ids, type tags, task ids, channels) that are
//! not valid text.
//!
//! LangGraph always stores them as text, but a damaged or hand-edited database can hold a
//! BLOB, a NULL or bytes that are not UTF-8 there. Such a row is not dropped and does not fail
//! the query: its key is shown escaped, in a form no saver writes —
//! `⟨BLOB x'74312d'⟩`, `⟨NULL⟩`, `⟨INTEGER 7⟩`, `⟨REAL 1.5⟩`, `⟨invalid UTF-8 "t\xff1"⟩` — and
//! the row carries a note saying so ([`crate::CheckpointHeader::problem`],
//! [`crate::ThreadInfo::problem`]). An escaped id cannot be used to look the row up again.

use std::fmt::Write as _;

/// A key column as stored.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RawKey<'a> {
    /// TEXT (its bytes, which may not be UTF-8).
    Text(&'a [u8]),
    /// A BLOB.
    Blob(&'a [u8]),
    /// SQL NULL.
    Null,
    /// An INTEGER (possible in a column without type affinity).
    Integer(i64),
    /// A REAL.
    Real(f64),
}

impl<'a> From<rusqlite::types::ValueRef<'a>> for RawKey<'a> {
    fn from(v: rusqlite::types::ValueRef<'a>) -> Self {
        use rusqlite::types::ValueRef;
        match v {
            ValueRef::Null => RawKey::Null,
            ValueRef::Integer(i) => RawKey::Integer(i),
            ValueRef::Real(f) => RawKey::Real(f),
            ValueRef::Text(b) => RawKey::Text(b),
            ValueRef::Blob(b) => RawKey::Blob(b),
        }
    }
}

/// At most this many bytes of a BLOB are shown.
const BLOB_SHOWN: usize = 48;

/// A key that is not valid text: how it is shown, and the note for its row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadKey {
    /// The escaped form.
    pub(crate) shown: String,
    /// e.g. `thread_id is a BLOB, not text`.
    pub(crate) problem: String,
}

/// The text of key column `column`, or its escaped form with a note.
pub(crate) fn key_text(column: &str, raw: RawKey<'_>) -> Result<String, BadKey> {
    let bad = |shown: String, what: &str| BadKey {
        problem: format!("{column} {what} (shown as {shown})"),
        shown,
    };
    match raw {
        RawKey::Text(b) => match std::str::from_utf8(b) {
            Ok(s) => Ok(s.to_owned()),
            Err(_) => Err(bad(
                format!("⟨invalid UTF-8 \"{}\"⟩", escape_bytes(b)),
                "is not valid UTF-8",
            )),
        },
        RawKey::Blob(b) => {
            let mut hex = String::with_capacity(2 * b.len().min(BLOB_SHOWN));
            for byte in b.iter().take(BLOB_SHOWN) {
                let _ = write!(hex, "{byte:02x}");
            }
            let more = if b.len() > BLOB_SHOWN {
                format!("… {} bytes", b.len())
            } else {
                String::new()
            };
            Err(bad(format!("⟨BLOB x'{hex}'{more}⟩"), "is a BLOB, not text"))
        }
        RawKey::Null => Err(bad("⟨NULL⟩".into(), "is NULL")),
        RawKey::Integer(i) => Err(bad(format!("⟨INTEGER {i}⟩"), "is an INTEGER, not text")),
        RawKey::Real(f) => Err(bad(format!("⟨REAL {f}⟩"), "is a REAL, not text")),
    }
}

/// [`key_text`] for a row: the text (or escaped form), the note pushed onto `problems`.
pub(crate) fn key_or_note(column: &str, raw: RawKey<'_>, problems: &mut Vec<String>) -> String {
    key_text(column, raw).unwrap_or_else(|bad| {
        problems.push(bad.problem);
        bad.shown
    })
}

/// Bytes as text: valid UTF-8 runs as they are, every other byte as `\xNN`.
pub(crate) fn escape_bytes(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    for chunk in b.utf8_chunks() {
        out.push_str(chunk.valid());
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out
}

/// The notes of a row as one line (`None` when there are none).
pub(crate) fn joined(problems: Vec<String>) -> Option<String> {
    if problems.is_empty() {
        None
    } else {
        Some(problems.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_are_not_text_are_escaped_with_a_note() {
        assert_eq!(key_text("thread_id", RawKey::Text(b"t1")), Ok("t1".into()));
        let bad = key_text("thread_id", RawKey::Text(b"t\xff1")).unwrap_err();
        assert_eq!(bad.shown, "⟨invalid UTF-8 \"t\\xff1\"⟩");
        assert!(bad.problem.starts_with("thread_id is not valid UTF-8"));
        let blob = key_text("checkpoint_ns", RawKey::Blob(b"t1-")).unwrap_err();
        assert_eq!(blob.shown, "⟨BLOB x'74312d'⟩");
        assert_eq!(
            blob.problem,
            "checkpoint_ns is a BLOB, not text (shown as ⟨BLOB x'74312d'⟩)"
        );
        let long = key_text("checkpoint_id", RawKey::Blob(&[0u8; 100])).unwrap_err();
        assert!(long.shown.ends_with("… 100 bytes⟩"), "{}", long.shown);
        assert_eq!(key_text("x", RawKey::Null).unwrap_err().shown, "⟨NULL⟩");
        assert_eq!(
            key_text("x", RawKey::Integer(7)).unwrap_err().shown,
            "⟨INTEGER 7⟩"
        );
        let mut notes = Vec::new();
        assert_eq!(key_or_note("a", RawKey::Text(b"ok"), &mut notes), "ok");
        assert_eq!(key_or_note("b", RawKey::Null, &mut notes), "⟨NULL⟩");
        assert_eq!(joined(notes), Some("b is NULL (shown as ⟨NULL⟩)".into()));
        assert_eq!(joined(Vec::new()), None);
    }
}
