//! Files the user names as output (an export, the SQLite database a conversion creates): the
//! one place that decides what may stand at such a path and how it is replaced, so every door
//! (the CLI's `-o`, the app, `flashback serve`) gets the same answer.
//!
//! * Only a regular file is ever replaced, or a new name created. A directory, a FIFO, a
//!   device or a socket at the path is refused (never opened, never replaced).
//! * A symbolic link: the desktop app and the CLI follow it to a regular file (the link stays,
//!   the file it names is replaced); `flashback serve` refuses it, and a regular file with
//!   other hard links too — either may lead outside `--export-dir`.
//! * Content is written to a temporary file in the same folder, synced, then renamed over the
//!   target (checked again just before): readers see the old file or the whole new one.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::location::file_kind;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// The path to write for `path` (the file a symbolic link names, outside `serve`), or why
/// nothing may be written there. `within` is `serve`'s `--export-dir`: links are refused.
pub(crate) fn check(path: &Path, within: Option<&Path>) -> ApiResult<PathBuf> {
    if path.file_name().is_none() {
        return Err(ApiError::invalid(format!(
            "{} is not a file name",
            path.display()
        )));
    }
    let folder = folder_of(path);
    if !folder.is_dir() {
        return Err(ApiError::not_found(format!(
            "cannot write {}: no such folder {}",
            path.display(),
            folder.display()
        )));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(e) => return Err(cannot_write(path, &e)),
    };
    if meta.file_type().is_symlink() {
        if within.is_some() {
            return Err(ApiError::new(
                ErrorCode::NotAllowed,
                format!(
                    "{} is a symbolic link: this server writes only regular files inside its \
                     --export-dir",
                    path.display()
                ),
            ));
        }
        let target = path.canonicalize().map_err(|_| {
            ApiError::invalid(format!(
                "{} is a symbolic link to nothing: give the file's own path",
                path.display()
            ))
        })?;
        let meta = std::fs::metadata(&target).map_err(|e| cannot_write(path, &e))?;
        refuse_special(path, &meta)?;
        return Ok(target);
    }
    refuse_special(path, &meta)?;
    if within.is_some() && links(&meta) > 1 {
        return Err(ApiError::new(
            ErrorCode::NotAllowed,
            format!(
                "{} has other hard links, which may lead outside the --export-dir: this server \
                 does not replace it",
                path.display()
            ),
        ));
    }
    Ok(path.to_path_buf())
}

/// Write `bytes` to `path` (as [`check`] allows) so that readers see either the old content
/// or the complete new one.
pub(crate) fn write(path: &Path, bytes: &[u8], within: Option<&Path>) -> ApiResult<()> {
    let target = check(path, within)?;
    let folder = folder_of(&target);
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    // A temporary name of its own per call: two exports to the same path at once (two jobs, or
    // the CLI and the app) each rename a complete file, never one the other is still writing.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = folder.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true) // never through something already at the temporary name
        .open(&tmp)
        .and_then(|mut f| {
            std::io::Write::write_all(&mut f, bytes)?;
            // A replaced file keeps its permissions.
            if let Ok(old) = std::fs::metadata(&target) {
                f.set_permissions(old.permissions())?;
            }
            // On disk before the rename, so a crash cannot leave the new name with partial
            // content.
            f.sync_all()
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(cannot_write(path, &e));
    }
    // What stands there now is checked again: only a regular file (or nothing) is replaced.
    let replaced = check(&target, within).and_then(|again| {
        if again == target {
            std::fs::rename(&tmp, &target).map_err(|e| cannot_write(path, &e))
        } else {
            Err(ApiError::invalid(format!(
                "{} changed while it was written: nothing replaced",
                path.display()
            )))
        }
    });
    if replaced.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    replaced?;
    sync_folder(&folder);
    Ok(())
}

/// Before a database is opened for writing at `path` (a conversion's SQLite destination): as
/// [`check`] allows, and a missing file is created here, empty and exclusively, so that the
/// database is opened on a regular file of ours rather than on whatever took the name in
/// between. Returns the path to open and whether it was created.
pub(crate) fn prepare_database(path: &Path, within: Option<&Path>) -> ApiResult<(PathBuf, bool)> {
    let target = check(path, within)?;
    if std::fs::symlink_metadata(&target).is_ok() {
        return Ok((target, false));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&target)
        .map_err(|e| cannot_write(path, &e))?;
    Ok((target, true))
}

/// The folder a file name is in (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

fn refuse_special(path: &Path, meta: &Metadata) -> ApiResult<()> {
    if meta.is_file() {
        return Ok(());
    }
    Err(ApiError::invalid(format!(
        "{} is {}, not a regular file: Flashback writes only regular files",
        path.display(),
        file_kind(meta)
    )))
}

fn cannot_write(path: &Path, e: &std::io::Error) -> ApiError {
    ApiError::io(format!("cannot write {}: {e}", path.display()))
}

#[cfg(unix)]
fn links(meta: &Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
fn links(_: &Metadata) -> u64 {
    1
}

/// The rename itself on disk (POSIX: a directory's entries are synced through the directory).
fn sync_folder(folder: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = std::fs::File::open(folder) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = folder;
}
