//! A throwaway PostgreSQL cluster (`initdb` + `pg_ctl`) in a temporary directory.
//!
//! [`Cluster::start`] creates `/tmp/flashback-testpg-XXXXXX/` (or under `$TMPDIR` when `/tmp`
//! does not exist), runs `initdb` there (trust auth, superuser `postgres`, UTF-8, locale C) and
//! starts the server with `pg_ctl` on a free TCP port of 127.0.0.1, with its unix socket in the
//! same directory. When the process runs as root, `initdb` refuses to run, so both programs are
//! run as the `postgres` system user (`runuser -u postgres --`, or `su postgres -s /bin/sh -c`)
//! and the directory is handed to that user.
//!
//! Stopping: dropping a [`Cluster`] stops the server and deletes the directory. A process-wide
//! cluster kept in a `static` is never dropped, so every cluster also has a watchdog: a small
//! `sh` process that waits for the test process to exit (however it exits, even `kill -9`) and
//! then shuts the server down (`SIGQUIT`, an immediate shutdown) and removes the directory.
//! Should even the watchdog have been killed, the next [`Cluster::start`] sweeps the
//! directories whose owner process is gone. Each run uses a fresh directory and port, so a
//! leftover cluster can never break a later run.

use std::fs;
use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const DIR_PREFIX: &str = "flashback-testpg-";
const OWNER_FILE: &str = "owner.pid";
const START_ATTEMPTS: usize = 3;

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

/// A running throwaway cluster. Dropping it stops the server and removes its directory.
#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    port: u16,
    bindir: PathBuf,
    run_as: Option<DbUser>,
    watchdog: Option<Child>,
    stopped: bool,
}

/// The system user that owns the cluster when we run as root.
#[derive(Debug, Clone)]
struct DbUser {
    name: String,
    uid: u32,
    gid: u32,
}

impl Cluster {
    /// Initialises and starts a new cluster. The error is a human-readable reason (which
    /// programs were looked for, or the tail of the server log).
    pub fn start() -> Result<Cluster, String> {
        let bindir = find_bindir().ok_or_else(|| {
            format!(
                "initdb and pg_ctl not found (looked in $FLASHBACK_PG_BINDIR, PATH, {})",
                FALLBACK_BINDIRS.join(", ")
            )
        })?;
        let run_as = if running_as_root() {
            Some(lookup_user("postgres").ok_or_else(|| {
                "running as root (initdb refuses that) and there is no `postgres` system user to run it as"
                    .to_owned()
            })?)
        } else {
            None
        };

        let base = temp_base();
        sweep_stale(&base);
        let dir = tempfile::Builder::new()
            .prefix(DIR_PREFIX)
            .tempdir_in(&base)
            .map_err(|e| format!("cannot create a temp dir in {}: {e}", base.display()))?
            .keep();
        let mut cluster = Cluster {
            dir,
            port: 0,
            bindir,
            run_as,
            watchdog: None,
            stopped: false,
        };
        // From here on, dropping `cluster` on an error path cleans up.
        fs::write(
            cluster.dir.join(OWNER_FILE),
            format!("{}\n", std::process::id()),
        )
        .map_err(|e| format!("cannot write {}: {e}", cluster.dir.display()))?;
        if let Some(user) = &cluster.run_as {
            std::os::unix::fs::chown(&cluster.dir, Some(user.uid), Some(user.gid)).map_err(
                |e| {
                    format!(
                        "cannot chown {} to {}: {e}",
                        cluster.dir.display(),
                        user.name
                    )
                },
            )?;
        }
        cluster.watchdog = spawn_watchdog(&cluster.dir);

        let data = cluster.data_dir();
        cluster.run(
            "initdb",
            &[
                "-D".into(),
                path_arg(&data),
                "-U".into(),
                "postgres".into(),
                "-A".into(),
                "trust".into(),
                "-E".into(),
                "UTF8".into(),
                "--locale=C".into(),
                "--no-sync".into(),
            ],
        )?;

        let mut last_error = String::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port()?;
            let options = format!(
                "-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} \
                 -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
                cluster.dir.display()
            );
            let started = cluster.run(
                "pg_ctl",
                &[
                    "-D".into(),
                    path_arg(&data),
                    "-l".into(),
                    path_arg(&cluster.log_file()),
                    "-w".into(),
                    "-t".into(),
                    "60".into(),
                    "-o".into(),
                    options,
                    "start".into(),
                ],
            );
            match started {
                Ok(()) => {
                    cluster.port = port;
                    return Ok(cluster);
                }
                Err(e) => {
                    last_error = format!("{e}; server log: {}", cluster.log_tail());
                    // A half-started server (e.g. pg_ctl timed out) must not linger.
                    let _ = cluster.run(
                        "pg_ctl",
                        &[
                            "-D".into(),
                            path_arg(&data),
                            "-m".into(),
                            "immediate".into(),
                            "-w".into(),
                            "stop".into(),
                        ],
                    );
                }
            }
        }
        Err(format!(
            "throwaway cluster in {} did not start: {last_error}",
            cluster.dir.display()
        ))
    }

    /// The URL of the `postgres` database as superuser `postgres`.
    pub fn admin_url(&self) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The TCP port (on 127.0.0.1) the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary directory holding the data directory, the log and the unix socket.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stops the server (immediate shutdown) and removes the directory. Idempotent; also
    /// done by `Drop`.
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        if self.data_dir().join("postmaster.pid").exists() {
            let data = path_arg(&self.data_dir());
            let _ = self.run(
                "pg_ctl",
                &[
                    "-D".into(),
                    data,
                    "-m".into(),
                    "immediate".into(),
                    "-w".into(),
                    "stop".into(),
                ],
            );
        }
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = watchdog.kill();
            let _ = watchdog.wait();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn log_file(&self) -> PathBuf {
        self.dir.join("postgres.log")
    }

    fn log_tail(&self) -> String {
        let mut text = String::new();
        if let Ok(mut file) = fs::File::open(self.log_file()) {
            let _ = file.read_to_string(&mut text);
        }
        tail(&text, 1500)
    }

    /// Runs a PostgreSQL program from the bindir (as the `postgres` user when root).
    fn run(&self, program: &str, args: &[String]) -> Result<(), String> {
        let program_path = self.bindir.join(program);
        let mut command = match &self.run_as {
            None => {
                let mut c = Command::new(&program_path);
                c.args(args);
                c
            }
            Some(user) => as_user(&user.name, &program_path, args),
        };
        command
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .env_remove("PGDATA")
            .env_remove("PGPORT")
            .env_remove("PGHOST");
        let output: Output = command
            .output()
            .map_err(|e| format!("cannot run {}: {e}", program_path.display()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} failed ({}): {}{}",
                output.status,
                tail(&String::from_utf8_lossy(&output.stderr), 1500),
                tail(&String::from_utf8_lossy(&output.stdout), 500),
            ))
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Builds a command running `program args…` as `user`.
fn as_user(user: &str, program: &Path, args: &[String]) -> Command {
    if let Some(runuser) = find_in_path_or(&["/usr/sbin", "/sbin"], "runuser") {
        let mut c = Command::new(runuser);
        c.arg("-u").arg(user).arg("--").arg(program).args(args);
        c
    } else {
        let mut script = format!("exec {}", shell_quote(&path_arg(program)));
        for arg in args {
            script.push(' ');
            script.push_str(&shell_quote(arg));
        }
        let mut c = Command::new("su");
        c.arg(user).arg("-s").arg("/bin/sh").arg("-c").arg(script);
        c
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn tail(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    let count = text.chars().count();
    if count <= max_chars {
        text.to_owned()
    } else {
        let skipped: String = text.chars().skip(count - max_chars).collect();
        format!("…{skipped}")
    }
}

fn spawn_watchdog(dir: &Path) -> Option<Child> {
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

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot bind a port on 127.0.0.1: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("cannot read the bound port: {e}"))
}

/// `/tmp` when it exists (short, and readable by the `postgres` user, unlike some `$TMPDIR`s),
/// else the platform temp dir.
fn temp_base() -> PathBuf {
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
fn sweep_stale(base: &Path) {
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

const FALLBACK_BINDIRS: &[&str] = &[
    "/usr/lib/postgresql/*/bin",
    "/usr/local/bin",
    "/usr/local/pgsql/bin",
];

/// Finds a directory holding both `initdb` and `pg_ctl`: `$FLASHBACK_PG_BINDIR`, then `PATH`,
/// then `/usr/lib/postgresql/<newest>/bin`, `/usr/local/bin`, `/usr/local/pgsql/bin`.
pub(crate) fn find_bindir() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("FLASHBACK_PG_BINDIR") {
        candidates.push(PathBuf::from(dir));
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path));
    }
    let mut versioned: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_string_lossy().parse::<u32>().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    versioned.sort_by_key(|(version, _)| std::cmp::Reverse(*version));
    candidates.extend(versioned.into_iter().map(|(_, dir)| dir));
    candidates.push(PathBuf::from("/usr/local/bin"));
    candidates.push(PathBuf::from("/usr/local/pgsql/bin"));
    candidates
        .into_iter()
        .find(|dir| is_executable(&dir.join("initdb")) && is_executable(&dir.join("pg_ctl")))
}

fn find_in_path_or(extra_dirs: &[&str], program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra_dirs.iter().map(PathBuf::from))
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Whether the effective uid is 0 (read from `/proc/self/status`, else from `id -u`).
fn running_as_root() -> bool {
    if let Ok(status) = fs::read_to_string("/proc/self/status") {
        if let Some(line) = status.lines().find(|l| l.starts_with("Uid:")) {
            // Uid: real effective saved fs
            if let Some(effective) = line.split_whitespace().nth(2) {
                return effective == "0";
            }
        }
    }
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn lookup_user(name: &str) -> Option<DbUser> {
    let passwd = fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        if fields.next()? != name {
            return None;
        }
        let _password = fields.next()?;
        let uid = fields.next()?.parse().ok()?;
        let gid = fields.next()?.parse().ok()?;
        Some(DbUser {
            name: name.to_owned(),
            uid,
            gid,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_for_sh() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(tail("  short \n", 10), "short");
        assert_eq!(tail("abcdefghij", 3), "…hij");
    }

    #[test]
    fn sweep_removes_dirs_of_dead_owners_only() {
        let base = tempfile::tempdir().unwrap();
        let dead = base.path().join(format!("{DIR_PREFIX}dead"));
        let alive = base.path().join(format!("{DIR_PREFIX}alive"));
        let other = base.path().join("unrelated");
        for dir in [&dead, &alive, &other] {
            fs::create_dir(dir).unwrap();
        }
        // A pid above the kernel's pid_max (4194304 at most) never exists.
        fs::write(dead.join(OWNER_FILE), "4999999\n").unwrap();
        fs::write(alive.join(OWNER_FILE), format!("{}\n", std::process::id())).unwrap();
        fs::write(other.join(OWNER_FILE), "4999999\n").unwrap();
        sweep_stale(base.path());
        assert!(!dead.exists());
        assert!(alive.exists());
        assert!(other.exists());
    }
}
