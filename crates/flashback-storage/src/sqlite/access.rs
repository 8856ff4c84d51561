//! How a SQLite file is opened for reading without writing anything beside it.
//!
//! A read-only connection (`SQLITE_OPEN_READONLY`) never changes the database file, but on a
//! file in WAL mode (LangGraph's `SqliteSaver` sets `journal_mode=WAL`) SQLite still *creates*
//! `<file>-wal` and `<file>-shm` when they do not exist, and a read-only connection cannot
//! delete them on close: they stay behind, owned by whoever ran Flashback (in a shared sticky
//! directory that stops the owner's agent from opening its own database). And where they cannot
//! be created (a read-only directory), the read fails ("attempt to write a readonly
//! database"). What SQLite documents (wal.html, "Read-Only Databases", since 3.22.0): a
//! read-only WAL database opens if the `-shm` and `-wal` files already exist, or can be
//! created, or the database is `immutable`; `immutable=1` takes no locks, never looks at the
//! `-wal` (committed data still only there is not seen) and detects no changes; `PRAGMA
//! locking_mode=EXCLUSIVE` avoids the `-shm` but takes an exclusive lock, which a read-only
//! file descriptor cannot, and which would stop the owner's agent.
//!
//! So the way a file is read is chosen from what is on disk ([`Observed`]), per file:
//!
//! | the file | how it is read |
//! |---|---|
//! | not in WAL mode (rollback journal) | [`Mode::Plain`]: read-only, as always |
//! | WAL, `-wal` and `-shm` both exist (a writer is, or was, open) | [`Mode::Plain`]: uses them; creates nothing, deletes nothing (a `-shm` we cannot write is read as SQLite ≥ 3.22 allows) |
//! | WAL, no `-wal`, or one without frames (≤ 32 bytes) | [`Mode::Immutable`]: everything committed is in the file itself |
//! | WAL, a `-wal` with frames but no `-shm` (or one SQLite cannot use) | [`Mode::Snapshot`]: the file and its `-wal` copied to a private temporary directory (removed when the store closes) and read there |
//!
//! The choice is checked again before every read ([`Source::refresh`]): when a writer starts
//! (its `-wal`/`-shm` appear) or the file changes under an immutable reader, the connection is
//! reopened the way that now fits, so an immutable reader never serves stale pages.

use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long a read waits for another process's lock before giving up ("database is locked").
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(3);

/// A `-wal` file no longer than its header holds no frames.
const WAL_HEADER: u64 = 32;

/// How connections to the file are made.
#[derive(Debug)]
pub(super) enum Mode {
    /// `SQLITE_OPEN_READONLY` on the file itself.
    Plain,
    /// `file:…?immutable=1`: no locks, no side files, the `-wal` not read.
    Immutable,
    /// Read-only on a private copy of the file and its `-wal`.
    Snapshot(PrivateCopy),
}

/// What is on disk, as far as the choice of [`Mode`] depends on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Observed {
    wal_mode: bool,
    wal: Option<u64>,
    shm: bool,
    /// Size and modification time of the file (an immutable reader must reopen when it changes).
    file: Option<(u64, SystemTime)>,
}

impl Observed {
    pub(super) fn of(path: &Path) -> Observed {
        let meta = std::fs::metadata(path).ok();
        Observed {
            wal_mode: is_wal_mode(path),
            wal: std::fs::metadata(sidecar(path, "-wal"))
                .ok()
                .map(|m| m.len()),
            shm: sidecar(path, "-shm").exists(),
            file: meta.and_then(|m| Some((m.len(), m.modified().ok()?))),
        }
    }

    fn wal_has_frames(&self) -> bool {
        self.wal.is_some_and(|n| n > WAL_HEADER)
    }

    /// `(-wal exists, -shm exists)`.
    fn presence(&self) -> (bool, bool) {
        (self.wal.is_some(), self.shm)
    }

    /// What replaces plain reading when SQLite cannot use the `-wal`/`-shm` read-only.
    fn fallback(&self) -> Kind {
        if self.wal_has_frames() {
            Kind::Snapshot
        } else {
            Kind::Immutable
        }
    }

    /// The mode this state calls for (before any fallback).
    fn mode_kind(&self) -> Kind {
        if !self.wal_mode || (self.wal.is_some() && self.shm) {
            Kind::Plain
        } else {
            self.fallback()
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    Immutable,
    Snapshot,
}

/// Where reads of one file come from.
#[derive(Debug)]
pub(crate) struct Source {
    path: PathBuf,
    mode: Mode,
    seen: Observed,
    /// Plain reading of the WAL file failed while its `-wal`/`-shm` were present like this:
    /// `(-wal exists, -shm exists)`; until that changes, the fallback is used.
    plain_failed: Option<(bool, bool)>,
}

impl Source {
    /// Choose how to read `path` and open a first connection (see the module docs).
    pub(crate) fn open(path: &Path) -> Result<(Source, Connection), OpenError> {
        let mut source = Source {
            path: path.to_owned(),
            mode: Mode::Plain,
            seen: Observed::of(path),
            plain_failed: None,
        };
        let kind = source.fitting(&source.seen);
        let conn = source.open_kind(kind)?;
        Ok((source, conn))
    }

    /// A connection that reads through SQLite's small page cache instead of a memory map: for
    /// streaming one oversized document, whose overflow pages a mapped read would all keep
    /// resident (walking an overflow chain touches every page of it).
    pub(super) fn connect_unmapped(&self) -> rusqlite::Result<Connection> {
        let conn = self.connect()?;
        conn.query_row("PRAGMA mmap_size = 0", [], |r| r.get::<_, i64>(0))?;
        Ok(conn)
    }

    /// A new connection the way this source reads (e.g. a second one for parallel reads).
    pub(crate) fn connect(&self) -> rusqlite::Result<Connection> {
        let conn = match &self.mode {
            Mode::Plain => read_only(&self.path)?,
            Mode::Immutable => {
                let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI;
                Connection::open_with_flags(immutable_uri(&self.path), flags)?
            }
            Mode::Snapshot(copy) => read_only(&copy.file)?,
        };
        tune(&conn)?;
        Ok(conn)
    }

    /// Before a read: when what is on disk no longer fits the mode (a writer appeared, the
    /// file changed under an immutable reader, a snapshot's original changed), a new
    /// connection made the way that fits now; `None` when the current one still fits.
    pub(crate) fn refresh(&mut self) -> Result<Option<Connection>, OpenError> {
        let now = Observed::of(&self.path);
        if now == self.seen {
            return Ok(None);
        }
        let kind = self.fitting(&now);
        let reopen = match (&self.mode, kind) {
            (Mode::Plain, Kind::Plain) => false,
            (Mode::Immutable, Kind::Immutable) => now.file != self.seen.file,
            (Mode::Snapshot(_), Kind::Snapshot) => {
                now.wal != self.seen.wal || now.file != self.seen.file
            }
            _ => true,
        };
        self.seen = now;
        if reopen {
            self.open_kind(kind).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The kind of reading `now` calls for, given what failed before.
    fn fitting(&self, now: &Observed) -> Kind {
        let kind = now.mode_kind();
        if kind == Kind::Plain && now.wal_mode && self.plain_failed == Some(now.presence()) {
            now.fallback()
        } else {
            kind
        }
    }

    /// Switch to `kind` and connect. Plain reading of a WAL file is tried with a first read;
    /// when SQLite cannot use the existing `-wal`/`-shm` read-only, the fallback is used.
    fn open_kind(&mut self, kind: Kind) -> Result<Connection, OpenError> {
        self.mode = match kind {
            Kind::Plain => Mode::Plain,
            Kind::Immutable => Mode::Immutable,
            Kind::Snapshot => Mode::Snapshot(PrivateCopy::of(&self.path)?),
        };
        let conn = self.connect().map_err(OpenError::Sqlite)?;
        if kind == Kind::Plain && self.seen.wal_mode {
            if let Err(e) = probe(&conn) {
                if needs_fallback(&e) {
                    drop(conn);
                    self.plain_failed = Some(self.seen.presence());
                    return self.open_kind(self.seen.fallback());
                }
                // Anything else (not a database, locked…) is for the caller to report.
            }
        }
        Ok(conn)
    }
}

/// Why a file could not be opened for reading.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// SQLite refused.
    Sqlite(rusqlite::Error),
    /// The private copy of a WAL file could not be made.
    Snapshot(String),
}

/// A read-only connection: never creates, never writes, never changes the journal mode.
fn read_only(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(path, flags)
}

/// The memory-mapped part of the file for most reads: mmap saves a copy per page read, but
/// mapped pages count in the process's RSS, and a long history read streams its rows once, so
/// a bigger window gains it little (5% on a 785 MB thread, for 500 MB more RSS).
const MMAP_BYTES: i64 = 256 << 20;
/// The window for reads that look up many scattered rows of a big file (a thread list's latest
/// checkpoints): they read each page once but from all over the file (20–30% faster at 1M
/// checkpoints than with [`MMAP_BYTES`]).
const MMAP_LOOKUP_BYTES: i64 = 1 << 30;

/// Per-connection settings; nothing is written to the file.
fn tune(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    set_mmap(conn, MMAP_BYTES);
    // Sorts (ORDER BY checkpoint_id) stay in memory rather than in temporary files.
    conn.execute_batch("PRAGMA temp_store = MEMORY")
}

/// The pragma answers with the size granted (0 where mmap is unavailable, which is fine).
fn set_mmap(conn: &Connection, bytes: i64) {
    let _ = conn.query_row(&format!("PRAGMA mmap_size = {bytes}"), [], |r| {
        r.get::<_, i64>(0)
    });
}

/// The larger memory map of many scattered lookups, for as long as this lives (set before
/// the read transaction begins).
pub(super) struct LookupWindow<'c>(&'c Connection);

impl<'c> LookupWindow<'c> {
    pub(super) fn open(conn: &'c Connection) -> Self {
        set_mmap(conn, MMAP_LOOKUP_BYTES);
        LookupWindow(conn)
    }
}

impl Drop for LookupWindow<'_> {
    fn drop(&mut self) {
        set_mmap(self.0, MMAP_BYTES);
    }
}

/// The first read, which opens the WAL (and fails when SQLite cannot use it read-only).
fn probe(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
}

/// Errors of a read-only WAL open that another mode avoids: the `-shm` cannot be opened or
/// used read-only (`SQLITE_CANTOPEN`, `SQLITE_READONLY_*`).
fn needs_fallback(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly))
}

/// `<path><suffix>` (`-wal`, `-shm`, `-journal`).
pub(super) fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Whether the file's header says WAL mode (bytes 18 and 19, the file format write and read
/// versions, are 2). Reads 20 bytes; anything unreadable is "no".
pub(super) fn is_wal_mode(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head.starts_with(b"SQLite format 3\0") && head[18] == 2 && head[19] == 2)
}

/// `file:` URI of `path` with `immutable=1` (RFC 3986 escaping of everything but unreserved
/// characters and `/`).
fn immutable_uri(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut uri = String::from("file:");
    for b in abs.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(*b as char)
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// A private copy of a WAL database and its `-wal`, in a directory of its own that is removed
/// when the copy is dropped.
#[derive(Debug)]
pub(super) struct PrivateCopy {
    dir: PathBuf,
    file: PathBuf,
}

impl PrivateCopy {
    fn of(path: &Path) -> Result<PrivateCopy, OpenError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "flashback-snapshot-{}-{nanos}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let fail = |what: &str, e: std::io::Error| {
            OpenError::Snapshot(format!(
                "{} is in WAL mode and {}-wal holds changes not yet checkpointed, but there is \
                 no usable {}-shm beside it and Flashback does not create files next to a \
                 database it reads; {what} a private copy in {} failed ({e}): free space there \
                 (or set TMPDIR), or checkpoint the file as its owner (`sqlite3 FILE \"PRAGMA \
                 wal_checkpoint(TRUNCATE)\"`)",
                path.display(),
                path.display(),
                path.display(),
                std::env::temp_dir().display()
            ))
        };
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir).map_err(|e| fail("making", e))?;
        let copy = PrivateCopy {
            file: dir.join("snapshot.sqlite"),
            dir,
        };
        // The -wal first: frames committed after it was copied are simply not seen, while a
        // file copied first could miss pages a checkpoint moved out of the -wal meanwhile.
        std::fs::copy(sidecar(path, "-wal"), sidecar(&copy.file, "-wal"))
            .map_err(|e| fail("making", e))?;
        std::fs::copy(path, &copy.file).map_err(|e| fail("making", e))?;
        Ok(copy)
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immutable_uris_escape_what_uris_reserve() {
        assert_eq!(
            immutable_uri(Path::new("/tmp/a b/c?d#e%f.sqlite")),
            "file:/tmp/a%20b/c%3Fd%23e%25f.sqlite?immutable=1"
        );
    }

    #[test]
    fn the_mode_follows_what_is_on_disk() {
        let at = |wal_mode, wal, shm| Observed {
            wal_mode,
            wal,
            shm,
            file: None,
        };
        assert_eq!(at(false, None, false).mode_kind(), Kind::Plain);
        assert_eq!(at(false, Some(4000), true).mode_kind(), Kind::Plain);
        assert_eq!(at(true, Some(4000), true).mode_kind(), Kind::Plain);
        assert_eq!(at(true, Some(0), true).mode_kind(), Kind::Plain);
        assert_eq!(at(true, None, false).mode_kind(), Kind::Immutable);
        assert_eq!(at(true, None, true).mode_kind(), Kind::Immutable);
        assert_eq!(at(true, Some(32), false).mode_kind(), Kind::Immutable);
        assert_eq!(at(true, Some(4000), false).mode_kind(), Kind::Snapshot);
    }
}
