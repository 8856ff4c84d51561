//! Cleaning up after test processes: the watchdog that stops a cluster when its process exits,
//! and the sweep of clusters left behind by processes that are gone.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{DIR_PREFIX, OWNER_FILE};

/// The `sh` script run as the watchdog; `$1` = the test process id, `$2` = the cluster dir.
const WATCHDOG: &str = r#"
trap '' INT TERM HUP
while kill -0 "$1" 2>/dev/null; do sleep 1; done
if [ -f "$2/data/postmaster.pid" ]; then
  pm=$(head -n 1 "$2/data/postmaster.pid")
  kill -QUIT "$pm" 2>/dev/null
  i=0
  while kill -0 "$pm" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i+1)); done
fi
rm -rf "$2"
"#;

pub(super) fn spawn_watchdog(dir: &Path) -> Option<Child> {
    Command::new("sh")
        .arg("-c")
        .arg(WATCHDOG)
        .arg("flashback-testpg-watchdog")
        .arg(std::process::id().to_string())
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

/// `/tmp` when it exists (short, and readable by the `postgres` user, unlike some `$TMPDIR`s),
/// else the platform temp dir.
pub(super) fn temp_base() -> PathBuf {
    let tmp = PathBuf::from("/tmp");
    if tmp.is_dir() {
        tmp
    } else {
        std::env::temp_dir()
    }
}

fn process_alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

fn read_pid(path: &Path) -> Option<u32> {
    fs::read_to_string(path)
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

/// Removes clusters left behind by test processes that no longer exist (their watchdog was
/// killed too). Clusters of live processes are left alone.
pub(super) fn sweep_stale(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(DIR_PREFIX) {
            continue;
        }
        let dir = entry.path();
        let Some(owner) = read_pid(&dir.join(OWNER_FILE)) else {
            continue;
        };
        if process_alive(owner) {
            continue;
        }
        if let Some(postmaster) = read_pid(&dir.join("data").join("postmaster.pid")) {
            if process_alive(postmaster) {
                let _ = Command::new("kill")
                    .arg("-QUIT")
                    .arg(postmaster.to_string())
                    .stderr(Stdio::null())
                    .status();
                let deadline = Instant::now() + Duration::from_secs(10);
                while process_alive(postmaster) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
        let _ = fs::remove_dir_all(&dir);
    }
}
