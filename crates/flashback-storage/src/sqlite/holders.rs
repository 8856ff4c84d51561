//! Whether another program has a SQLite file open, without opening it: Linux lists every
//! file lock in `/proc/locks`, and SQLite keeps locks while a connection is open on a WAL
//! database (a read lock on the file's shared range and on the `-shm` file's "dead man
//! switch" byte), so another process's lock on the file or its `-shm` means a program uses
//! it. Opening the file ourselves to ask (`F_GETLK`) is not an option: closing any descriptor
//! of a file drops every POSIX lock this process holds on it, including our own readers'.
//! On a rollback-journal file an idle connection holds no lock (only one inside a transaction
//! is seen); elsewhere than Linux the answer is "unknown".

use std::path::Path;

/// The other processes holding a lock on `path` or its `-shm`, or `None` when that cannot
/// be known here.
pub(crate) fn other_holders(path: &Path) -> Option<Vec<u32>> {
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let mut files = Vec::new();
    for p in [path.to_path_buf(), side(path, "-shm")] {
        if let Some(id) = file_id(&p) {
            files.push(id);
        }
    }
    if files.is_empty() {
        return None;
    }
    Some(holders(&locks, &files, std::process::id()))
}

/// `<path><suffix>`.
fn side(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    s.into()
}

/// The file's `(major, minor, inode)` as `/proc/locks` prints them.
#[cfg(unix)]
fn file_id(path: &Path) -> Option<(u64, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    let dev = m.dev();
    // glibc's encoding of dev_t (gnu_dev_major / gnu_dev_minor).
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    Some((major, minor, m.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &Path) -> Option<(u64, u64, u64)> {
    None
}

/// The pids other than `me` that `/proc/locks` text shows holding a lock on one of `files`
/// (`1: POSIX  ADVISORY  READ 4242 fe:00:1234 1073741826 1073742335`; a waiter's line
/// starts `1: -> …`; OFD locks show pid -1 and are counted as another holder's).
fn holders(locks: &str, files: &[(u64, u64, u64)], me: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for line in locks.lines() {
        let fields: Vec<&str> = line.split_whitespace().filter(|f| *f != "->").collect();
        let (Some(pid), Some(id)) = (fields.get(4), fields.get(5)) else {
            continue;
        };
        let mut parts = id.split(':');
        let parsed = (|| {
            let major = u64::from_str_radix(parts.next()?, 16).ok()?;
            let minor = u64::from_str_radix(parts.next()?, 16).ok()?;
            let inode = parts.next()?.parse::<u64>().ok()?;
            Some((major, minor, inode))
        })();
        if !parsed.is_some_and(|f| files.contains(&f)) {
            continue;
        }
        let pid = pid.parse::<i64>().unwrap_or(-1);
        let pid = u32::try_from(pid).unwrap_or(0);
        if pid != me && !out.contains(&pid) {
            out.push(pid);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_lines_name_the_other_holders() {
        let text = "1: POSIX  ADVISORY  READ 4242 fe:00:77 1073741826 1073742335\n\
                    2: POSIX  ADVISORY  READ 7 fe:00:77 128 128\n\
                    2: -> POSIX  ADVISORY  WRITE 99 fe:00:77 128 128\n\
                    3: POSIX  ADVISORY  WRITE 5 fe:00:78 0 EOF\n\
                    4: OFDLCK ADVISORY  READ -1 fe:00:79 0 EOF\n\
                    garbage\n";
        let files = [(0xfe, 0, 77), (0xfe, 0, 79)];
        assert_eq!(holders(text, &files, 7), vec![4242, 99, 0]);
        assert!(holders(text, &[(0xfe, 0, 1)], 7).is_empty());
    }

    #[test]
    fn this_process_holding_its_own_file_is_not_another_holder() {
        let dir = std::env::temp_dir().join(format!("fb-holders-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.sqlite");
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
        let _: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        if let Some(others) = other_holders(&path) {
            assert!(others.is_empty(), "{others:?}");
        }
        drop(conn);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
