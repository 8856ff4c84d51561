//! Finding and running the PostgreSQL programs: the bindir holding `initdb` and `pg_ctl`, and
//! when running as root the `postgres` system user to run them as (`runuser` or `su`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The system user that owns the cluster when we run as root.
#[derive(Debug, Clone)]
pub(super) struct DbUser {
    pub(super) name: String,
    pub(super) uid: u32,
    pub(super) gid: u32,
}

/// Builds a command running `program args…` as `user`.
pub(super) fn as_user(user: &str, program: &Path, args: &[String]) -> Command {
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

/// Finds `initdb`/`pg_ctl` and, when running as root, the system user to run them as.
pub(super) fn locate_programs() -> Result<(PathBuf, Option<DbUser>), String> {
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
    Ok((bindir, run_as))
}

pub(super) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

pub(super) fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
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
