//! Databases holding one very large value, for the decode-budget tests: a copy of a fixture
//! whose latest root checkpoint of a thread gets an extra channel with the given msgpack bytes,
//! spliced in as bytes (so building a 200 MB value costs 200 MB once, not a value tree).

use std::path::Path;

/// One large msgpack value, generated in chunks (never whole in memory).
#[derive(Debug, Clone, Copy)]
pub enum BigValue {
    /// A list of `n` 32-bit ints (5 bytes each): what a long Python list of numbers is.
    Ints(u32),
    /// `len` bytes (a `bytes` value, laid out as numpy's buffer is).
    Bytes(u32),
}

impl BigValue {
    /// Its encoded size.
    pub fn len(self) -> u64 {
        match self {
            BigValue::Ints(n) => 5 + 5 * u64::from(n),
            BigValue::Bytes(n) => 5 + u64::from(n),
        }
    }

    /// Whether it encodes to nothing (never: a header is always there).
    pub fn is_empty(self) -> bool {
        false
    }

    /// Its bytes, in chunks of about 1 MB, to `out`.
    pub fn write_to(self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut chunk = Vec::with_capacity(1 << 20);
        match self {
            BigValue::Ints(n) => {
                chunk.push(0xdd);
                chunk.extend_from_slice(&n.to_be_bytes());
                for i in 0..n {
                    chunk.push(0xce);
                    chunk.extend_from_slice(&(i | 0x1000_0000).to_be_bytes());
                    if chunk.len() >= 1 << 20 {
                        out.write_all(&chunk)?;
                        chunk.clear();
                    }
                }
            }
            BigValue::Bytes(len) => {
                chunk.push(0xc6);
                chunk.extend_from_slice(&len.to_be_bytes());
                let mut left = len as usize;
                while left > 0 {
                    let k = left.min((1 << 20) - chunk.len());
                    chunk.resize(chunk.len() + k, 0x5a);
                    left -= k;
                    out.write_all(&chunk)?;
                    chunk.clear();
                }
            }
        }
        out.write_all(&chunk)
    }

    /// Its bytes in one buffer (for small values).
    pub fn to_vec(self) -> Vec<u8> {
        let mut v = Vec::new();
        self.write_to(&mut v).expect("writing to a Vec");
        v
    }
}

/// Put `value` as channel `channel` into the latest root-namespace checkpoint of `thread` in the
/// SQLite database at `db`, and as a pending write of that checkpoint on the same channel.
/// Written through SQLite's incremental blob I/O, so this process never holds the value (a
/// child's peak memory read with `getrusage` includes what its parent held when it started).
/// Returns the checkpoint id.
pub fn splice(db: &Path, thread: &str, channel: &str, value: BigValue) -> Result<String, String> {
    let conn = rusqlite::Connection::open(db).map_err(|e| e.to_string())?;
    let (id, doc): (String, Vec<u8>) = conn
        .query_row(
            "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ? AND \
             checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
            [thread],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| e.to_string())?;
    // The document is a map whose `channel_values` is a map: add one entry to that map by
    // re-encoding with a marker string, then swapping the marker's bytes for `raw`.
    let mut document = flashback_codec::msgpack::decode(&doc).map_err(|e| e.to_string())?;
    let marker = "\u{1}flashback-big-value-marker\u{1}";
    let flashback_codec::Value::Map(entries) = &mut document else {
        return Err("the checkpoint document is not a map".into());
    };
    let values = entries
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some("channel_values"))
        .map(|(_, v)| v)
        .ok_or("no channel_values")?;
    let flashback_codec::Value::Map(values) = values else {
        return Err("channel_values is not a map".into());
    };
    values.push((
        flashback_codec::Value::Str(channel.into()),
        flashback_codec::Value::Str(marker.into()),
    ));
    let encoded = flashback_codec::msgpack::encode(&document);
    let needle = flashback_codec::msgpack::encode(&flashback_codec::Value::Str(marker.into()));
    let at = encoded
        .windows(needle.len())
        .position(|w| w == needle.as_slice())
        .ok_or("marker not found")?;
    let (before, after) = (&encoded[..at], &encoded[at + needle.len()..]);
    let total = before.len() as u64 + value.len() + after.len() as u64;
    let err = |e: rusqlite::Error| e.to_string();
    conn.execute(
        "UPDATE checkpoints SET checkpoint = zeroblob(?) WHERE thread_id = ? AND \
         checkpoint_ns = '' AND checkpoint_id = ?",
        rusqlite::params![total as i64, thread, id],
    )
    .map_err(err)?;
    let rowid: i64 = conn
        .query_row(
            "SELECT rowid FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND \
             checkpoint_id = ?",
            rusqlite::params![thread, id],
            |r| r.get(0),
        )
        .map_err(err)?;
    {
        let blob = conn
            .blob_open(rusqlite::MAIN_DB, "checkpoints", "checkpoint", rowid, false)
            .map_err(err)?;
        let mut w = std::io::BufWriter::new(blob);
        let io = |e: std::io::Error| e.to_string();
        std::io::Write::write_all(&mut w, before).map_err(io)?;
        value.write_to(&mut w).map_err(io)?;
        std::io::Write::write_all(&mut w, after).map_err(io)?;
        std::io::Write::flush(&mut w).map_err(io)?;
    }
    conn.execute(
        "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, \
         type, value) VALUES (?, '', ?, 'big-task', 0, ?, 'msgpack', zeroblob(?))",
        rusqlite::params![thread, id, channel, value.len() as i64],
    )
    .map_err(err)?;
    let wrow = conn.last_insert_rowid();
    {
        let blob = conn
            .blob_open(rusqlite::MAIN_DB, "writes", "value", wrow, false)
            .map_err(err)?;
        let mut w = std::io::BufWriter::new(blob);
        value.write_to(&mut w).map_err(|e| e.to_string())?;
        std::io::Write::flush(&mut w).map_err(|e| e.to_string())?;
    }
    Ok(id)
}
