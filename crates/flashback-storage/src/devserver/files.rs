//! The dev server's folder and its files: which folder a location names, reading every file
//! as one consistent snapshot (the server rewrites them by temp file + rename while it runs),
//! and whether a server is running on it. Reading never writes, never locks.

use crate::StoreError;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The state folder's name inside a `langgraph dev` project.
pub const STATE_DIR: &str = ".langgraph_api";
/// Checkpoints (`InMemorySaver.storage`).
pub const CHECKPOINTS: &str = ".langgraph_checkpoint.1.pckl";
/// Pending writes (`InMemorySaver.writes`).
pub const WRITES: &str = ".langgraph_checkpoint.2.pckl";
/// Channel values (`InMemorySaver.blobs`; absent before langgraph-checkpoint 2.0.22, which
/// kept the values inside the checkpoint).
pub const BLOBS: &str = ".langgraph_checkpoint.3.pckl";
/// Threads, runs, assistants, crons.
pub const OPS: &str = ".langgraph_ops.pckl";
/// The memory Store's items.
pub const STORE: &str = "store.pckl";
/// The JS dev server's checkpointer (superjson): `MemorySaver`'s storage and writes.
pub const JS_CHECKPOINTER: &str = ".langgraphjs_api.checkpointer.json";
/// The JS dev server's threads, runs and assistants (superjson).
pub const JS_OPS: &str = ".langgraphjs_ops.json";
/// The JS dev server's memory Store (superjson).
pub const JS_STORE: &str = ".langgraphjs_api.store.json";

/// Every file the snapshot reads, in the order it reads them (a folder holds the Python
/// server's or the JS server's; the others are absent).
const FILES: [&str; 8] = [
    CHECKPOINTS,
    WRITES,
    BLOBS,
    OPS,
    STORE,
    JS_CHECKPOINTER,
    JS_OPS,
    JS_STORE,
];

/// The largest file read (a dev session's files are megabytes; this bounds memory).
pub const MAX_FILE_BYTES: u64 = 2 << 30;

/// The state folder a location names: the project folder (holding `.langgraph_api/`) or the
/// `.langgraph_api/` folder itself; `None` when `path` is not a folder holding the server's
/// files.
pub fn state_dir(path: &Path) -> Option<PathBuf> {
    if !path.is_dir() {
        return None;
    }
    let inner = path.join(STATE_DIR);
    if inner.is_dir() {
        return Some(inner);
    }
    let known = [CHECKPOINTS, OPS, STORE, JS_CHECKPOINTER, JS_OPS, JS_STORE];
    let named = path.file_name().is_some_and(|n| n == STATE_DIR);
    (named || known.iter().any(|f| path.join(f).is_file())).then(|| path.to_path_buf())
}

/// Whether `dir` is the LangGraph.js dev server's folder (its checkpointer file, no pickles).
pub fn is_js(dir: &Path) -> bool {
    dir.join(JS_CHECKPOINTER).is_file() && !dir.join(CHECKPOINTS).is_file()
}

/// When and how big a file was: a file rewritten between two looks differs here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    #[cfg(unix)]
    inode: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
        #[cfg(unix)]
        inode: std::os::unix::fs::MetadataExt::ino(&meta),
    })
}

impl Stamp {
    /// The modification time.
    pub fn modified(&self) -> Option<SystemTime> {
        self.modified
    }
}

/// A file as read: its name, stamp and bytes (`None`: absent).
pub type FileRead = (&'static str, Option<Stamp>, Option<Vec<u8>>);

/// The folder's files as read at one moment: each file's bytes (`None`: absent).
pub struct Files {
    /// The state folder.
    pub dir: PathBuf,
    /// Each file of [`FILES`].
    pub read: Vec<FileRead>,
}

impl Files {
    /// A file's bytes.
    pub fn bytes(&self, name: &str) -> Option<&[u8]> {
        self.read
            .iter()
            .find(|(n, _, _)| *n == name)
            .and_then(|(_, _, b)| b.as_deref())
    }

    /// A file's stamp.
    pub fn stamp(&self, name: &str) -> Option<Stamp> {
        self.read
            .iter()
            .find(|(n, _, _)| *n == name)
            .and_then(|(_, s, _)| *s)
    }

    /// Every file's stamp, to tell later whether the folder changed.
    pub fn stamps(&self) -> Vec<Option<Stamp>> {
        self.read.iter().map(|(_, s, _)| *s).collect()
    }
}

/// The stamps of the folder's files now.
pub fn stamps(dir: &Path) -> Vec<Option<Stamp>> {
    FILES.iter().map(|f| stamp(&dir.join(f))).collect()
}

/// Read every file; when one changed while they were read (the server rewrote it), read them
/// again, up to a few times: the result is one moment's files.
pub fn read_all(dir: &Path) -> Result<Files, StoreError> {
    let mut last = None;
    for _ in 0..5 {
        let before = stamps(dir);
        let mut read = Vec::with_capacity(FILES.len());
        for (name, st) in FILES.iter().zip(&before) {
            let bytes = match st {
                None => None,
                Some(st) if st.len > MAX_FILE_BYTES => {
                    return Err(StoreError::InvalidInput(format!(
                        "{} is {} bytes, over the {} bytes Flashback reads",
                        dir.join(name).display(),
                        st.len,
                        MAX_FILE_BYTES
                    )))
                }
                Some(_) => match std::fs::read(dir.join(name)) {
                    Ok(b) => Some(b),
                    // Removed in between (the server clears a file): read again.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => {
                        return Err(StoreError::Query(format!(
                            "cannot read {}: {e}",
                            dir.join(name).display()
                        )))
                    }
                },
            };
            read.push((*name, *st, bytes));
        }
        let files = Files {
            dir: dir.to_path_buf(),
            read,
        };
        if stamps(dir) == before {
            return Ok(files);
        }
        last = Some(files);
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Rewritten on every look: each file is still whole (the server renames), only the
    // files may disagree with each other, which the notes say.
    last.ok_or_else(|| StoreError::Query("the folder changed while it was read".into()))
}

/// Whether a `langgraph dev` server runs on the project holding `dir`: a process whose
/// working folder is the project and whose command line names langgraph (Linux: `/proc`).
/// The port a running `langgraph dev` (pid) serves its API on: its `--port N` (or
/// `--port=N`), else the CLI's default 2024.
pub fn server_port(pid: u32) -> u16 {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return DEFAULT_PORT;
    };
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    port_of(&args)
}

/// `langgraph dev`'s default port.
const DEFAULT_PORT: u16 = 2024;

fn port_of(args: &[String]) -> u16 {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = match a.strip_prefix("--port=") {
            Some(v) => Some(v.to_owned()),
            None if a == "--port" => it.next().cloned(),
            None => None,
        };
        if let Some(port) = value.and_then(|v| v.parse().ok()) {
            return port;
        }
    }
    DEFAULT_PORT
}

/// Returns the process id.
pub fn running_server(dir: &Path) -> Option<u32> {
    let project = if dir.file_name()? == STATE_DIR {
        dir.parent()?.to_path_buf()
    } else {
        dir.to_path_buf()
    };
    let project = std::fs::canonicalize(&project).ok()?;
    let me = std::process::id();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        if cwd != project {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if names_a_dev_server(&cmdline) {
            return Some(pid);
        }
    }
    None
}

/// A command line that runs a dev server: `langgraph dev`, `langgraph-api`, `langgraphjs dev`
/// (`@langchain/langgraph-cli`).
fn names_a_dev_server(cmdline: &str) -> bool {
    let words: Vec<&str> = cmdline.split_whitespace().collect();
    let langgraph = |w: &str| {
        let base = w.rsplit('/').next().unwrap_or(w);
        base == "langgraph" || base == "langgraphjs" || base.starts_with("langgraph-cli")
    };
    words
        .windows(2)
        .any(|w| langgraph(w[0]) && (w[1] == "dev" || w[1] == "up"))
        || words
            .iter()
            .any(|w| w.contains("langgraph_api") || w.contains("langgraph-api"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_port_is_read_from_its_command_line() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            port_of(&args(&["langgraph", "dev", "--port", "8123"])),
            8123
        );
        assert_eq!(port_of(&args(&["langgraph", "dev", "--port=9"])), 9);
        assert_eq!(port_of(&args(&["langgraph", "dev"])), 2024);
    }

    #[test]
    fn dev_server_command_lines_are_recognised() {
        for yes in [
            "/home/u/.venv/bin/python /home/u/.venv/bin/langgraph dev --no-browser",
            "langgraph dev",
            "node /x/node_modules/.bin/langgraphjs dev",
            "python -m langgraph_api.cli",
        ] {
            assert!(names_a_dev_server(yes), "{yes}");
        }
        for no in [
            "python graph.py",
            "vim langgraph.json",
            "langgraph build -t x",
        ] {
            assert!(!names_a_dev_server(no), "{no}");
        }
    }

    #[test]
    fn the_state_folder_is_found_from_the_project_or_itself() {
        let tmp = tempfile::tempdir().expect("tmp");
        assert_eq!(state_dir(tmp.path()), None, "an empty folder is not one");
        let state = tmp.path().join(STATE_DIR);
        std::fs::create_dir(&state).expect("mkdir");
        assert_eq!(state_dir(&state).as_deref(), Some(state.as_path()));
        std::fs::write(state.join(OPS), b"").expect("write");
        assert_eq!(state_dir(tmp.path()).as_deref(), Some(state.as_path()));
        assert_eq!(state_dir(&state.join(OPS)), None, "a file is not a folder");
    }
}
