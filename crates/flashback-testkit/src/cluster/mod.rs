//! A throwaway PostgreSQL cluster (`initdb` + `pg_ctl`) in a temporary directory.
//!
//! [`Cluster::start`] creates `/tmp/flashback-testpg-XXXXXX/` (or under `$TMPDIR` when `/tmp`
//! does not exist), runs `initdb` there (trust auth, superuser `postgres`, UTF-8, locale C) and
//! starts the server with `pg_ctl` on a free TCP port of 127.0.0.1, with its unix socket in the
//! same directory. When the process runs as root, `initdb` refuses to run, so both programs are
//! run as the `postgres` system user (`runuser -u postgres --`, or `su postgres -s /bin/sh -c`)
//! and the directory is handed to that user.
//!
//! [`Cluster::start_with_password`] starts the same kind of cluster but with `scram-sha-256`
//! authentication for every connection and a password for `postgres` (given to `initdb` in a
//! private file that is deleted right after), so that tests can exercise wrong credentials,
//! which a trust cluster (or a local server with trust auth) accepts.
//!
//! [`Cluster::start_configured`] adds files to the data directory (a TLS certificate and key,
//! a `pg_hba.conf` of its own) and server settings (`ssl=on`, …) before the server starts.
//!
//! Stopping: dropping a [`Cluster`] stops the server and deletes the directory. A process-wide
//! cluster kept in a `static` is never dropped, so every cluster also has a watchdog: a small
//! `sh` process that waits for the test process to exit (however it exits, even `kill -9`) and
//! then shuts the server down (`SIGQUIT`, an immediate shutdown) and removes the directory.
//! Should even the watchdog have been killed, the next [`Cluster::start`] sweeps the
//! directories whose owner process is gone. Each run uses a fresh directory and port, so a
//! leftover cluster can never break a later run.

mod cleanup;
mod programs;
#[cfg(test)]
mod tests;

use std::fs;
use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use cleanup::{spawn_watchdog, sweep_stale, temp_base};
use programs::{as_user, locate_programs, path_arg, shell_quote, DbUser};

const DIR_PREFIX: &str = "flashback-testpg-";
const OWNER_FILE: &str = "owner.pid";
const START_ATTEMPTS: usize = 3;
/// The superuser password file given to `initdb --pwfile` (deleted right after `initdb`).
const PWFILE: &str = "pwfile";

/// A running throwaway cluster. Dropping it stops the server and removes its directory.
#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    port: u16,
    bindir: PathBuf,
    run_as: Option<DbUser>,
    /// The superuser's password, for clusters that require one.
    password: Option<Secret>,
    watchdog: Option<Child>,
    stopped: bool,
}

/// A password, hidden from `Debug` output.
struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// How a cluster is initialised.
#[derive(Debug, Default)]
struct StartOptions<'a> {
    /// `None`: trust authentication. `Some(password)`: `scram-sha-256` for local and TCP
    /// connections, with this password for the superuser `postgres`.
    password: Option<&'a str>,
    config: Option<&'a ClusterConfig>,
}

/// Extra configuration of a throwaway trust cluster ([`Cluster::start_configured`]).
#[derive(Debug, Default, Clone)]
pub struct ClusterConfig {
    /// Files written into the data directory after `initdb`, before the server starts: mode
    /// 0600, owned by the user the server runs as. E.g. `server.crt` and `server.key` (the
    /// default TLS certificate and key names), or `pg_hba.conf` (replacing initdb's).
    pub data_files: Vec<(String, String)>,
    /// Server settings, each given as `-c name=value` when starting (e.g. `ssl=on`).
    pub settings: Vec<(String, String)>,
}

impl Cluster {
    /// Initialises and starts a new cluster with trust authentication (any local user may
    /// connect as `postgres` without a password). The error is a human-readable reason (which
    /// programs were looked for, or the tail of the server log).
    pub fn start() -> Result<Cluster, String> {
        Self::start_with(&StartOptions::default())
    }

    /// Initialises and starts a new cluster that requires passwords: `scram-sha-256` for
    /// every connection (TCP and unix socket), superuser `postgres` with `password`. Use
    /// [`Cluster::admin_url`] for the right credentials and [`Cluster::url_as`] for others.
    ///
    /// The password is handed to `initdb` in a file (`--pwfile`) readable only by the user
    /// `initdb` runs as, deleted as soon as `initdb` has finished. It must be non-empty and
    /// a single line.
    pub fn start_with_password(password: &str) -> Result<Cluster, String> {
        if password.is_empty() || password.contains(['\n', '\r', '\0']) {
            return Err(
                "the password of a throwaway cluster must be non-empty and a single line"
                    .to_owned(),
            );
        }
        Self::start_with(&StartOptions {
            password: Some(password),
            config: None,
        })
    }

    /// Like [`Cluster::start`] (trust authentication, unless `config` brings a `pg_hba.conf`),
    /// with `config`'s files in the data directory and its settings. File names must be plain
    /// names (no `/`); setting names letters, digits, `_` and `.`.
    pub fn start_configured(config: &ClusterConfig) -> Result<Cluster, String> {
        for (name, _) in &config.data_files {
            if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
                return Err(format!(
                    "not a plain file name for the data directory: {name:?}"
                ));
            }
        }
        for (name, _) in &config.settings {
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.".contains(c))
            {
                return Err(format!("not a server setting name: {name:?}"));
            }
        }
        Self::start_with(&StartOptions {
            password: None,
            config: Some(config),
        })
    }

    /// Why no throwaway cluster can be started on this machine (`initdb`/`pg_ctl` not found,
    /// or running as root without a `postgres` system user), or `None` when the programs are
    /// there. Lets a test tell "not installed" (skip) from "installed but broken" (fail).
    pub fn unavailable_reason() -> Option<String> {
        locate_programs().err()
    }

    fn start_with(options: &StartOptions<'_>) -> Result<Cluster, String> {
        let (bindir, run_as) = locate_programs()?;

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
            password: options.password.map(|p| Secret(p.to_owned())),
            watchdog: None,
            stopped: false,
        };
        // From here on, dropping `cluster` on an error path cleans up.
        fs::write(
            cluster.dir.join(OWNER_FILE),
            format!("{}\n", std::process::id()),
        )
        .map_err(|e| format!("cannot write {}: {e}", cluster.dir.display()))?;
        cluster.chown_to_db_user(&cluster.dir)?;
        cluster.watchdog = spawn_watchdog(&cluster.dir);

        cluster.initdb(options.password)?;
        let config = options.config.cloned().unwrap_or_default();
        for (name, contents) in &config.data_files {
            cluster.write_data_file(name, contents)?;
        }
        let settings: String = config
            .settings
            .iter()
            .map(|(name, value)| format!(" -c {}", shell_quote(&format!("{name}={value}"))))
            .collect();

        let data = cluster.data_dir();
        let mut last_error = String::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port()?;
            let options = format!(
                "-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} \
                 -c fsync=off -c synchronous_commit=off -c full_page_writes=off{settings}",
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

    /// Runs `initdb`: trust authentication without a password, else `scram-sha-256` with the
    /// password read from a private file that is removed again whatever `initdb` did.
    fn initdb(&self, password: Option<&str>) -> Result<(), String> {
        let mut args: Vec<String> = vec![
            "-D".into(),
            path_arg(&self.data_dir()),
            "-U".into(),
            "postgres".into(),
            "-E".into(),
            "UTF8".into(),
            "--locale=C".into(),
            "--no-sync".into(),
        ];
        let Some(password) = password else {
            args.extend(["-A".into(), "trust".into()]);
            return self.run("initdb", &args);
        };
        let pwfile = self.dir.join(PWFILE);
        let result = self.write_private(&pwfile, password).and_then(|()| {
            args.extend([
                "-A".into(),
                "scram-sha-256".into(),
                format!("--pwfile={}", path_arg(&pwfile)),
            ]);
            self.run("initdb", &args)
        });
        let _ = fs::remove_file(&pwfile);
        result
    }

    /// Writes `contents` to a new file with mode 0600, owned by the user the PostgreSQL
    /// programs run as.
    fn write_private(&self, path: &Path, contents: &str) -> Result<(), String> {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        file.write_all(contents.as_bytes())
            .and_then(|()| file.write_all(b"\n"))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        drop(file);
        self.chown_to_db_user(path)
    }

    /// Writes (or replaces) `name` in the data directory: mode 0600, owned by the server's user.
    fn write_data_file(&self, name: &str, contents: &str) -> Result<(), String> {
        let path = self.data_dir().join(name);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("cannot replace {}: {e}", path.display()))
            }
            _ => {}
        }
        self.write_private(&path, contents)
    }

    /// Hands `path` to the `postgres` system user when running as root; no-op otherwise.
    fn chown_to_db_user(&self, path: &Path) -> Result<(), String> {
        let Some(user) = &self.run_as else {
            return Ok(());
        };
        std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid))
            .map_err(|e| format!("cannot chown {} to {}: {e}", path.display(), user.name))
    }

    /// The URL of the `postgres` database as superuser `postgres`, with the password when
    /// the cluster requires one ([`Cluster::start_with_password`]).
    pub fn admin_url(&self) -> String {
        self.url_as("postgres", self.password())
    }

    /// The URL of the `postgres` database as `user`, with `password` if given (both
    /// percent-encoded), e.g. to try wrong credentials.
    pub fn url_as(&self, user: &str, password: Option<&str>) -> String {
        let userinfo = match password {
            Some(password) => format!("{}:{}", url_encode(user), url_encode(password)),
            None => url_encode(user),
        };
        format!("postgresql://{userinfo}@127.0.0.1:{}/postgres", self.port)
    }

    /// The superuser's password, for a cluster started with
    /// [`Cluster::start_with_password`]; `None` for a trust cluster.
    pub fn password(&self) -> Option<&str> {
        self.password.as_ref().map(|p| p.0.as_str())
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

/// Percent-encodes everything but RFC 3986 unreserved characters, for a URL's userinfo.
fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for byte in s.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
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

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot bind a port on 127.0.0.1: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("cannot read the bound port: {e}"))
}
