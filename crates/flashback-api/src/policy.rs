//! What the backend may do on this machine beyond reading and writing the databases it opens:
//! run commands (re-run) and write files (exports). The desktop app and the CLI act for the
//! user who started them and may do both ([`Policy::full`]); `flashback serve` hands its token
//! to a browser, so there both are opt-in (`--allow-run`, `--export-dir`). The checks live here
//! and nowhere else, so every door gets the same answer.

use crate::error::{ApiError, ApiResult, ErrorCode};
use std::path::{Component, Path, PathBuf};

/// Where exports may be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportWrites {
    /// Any path the user names.
    Anywhere,
    /// Only inside this directory (canonical: symbolic links resolved).
    Within(PathBuf),
    /// Nowhere: an export returns its content, which a browser downloads.
    Nowhere,
}

/// What the backend may do beyond the databases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Whether `start_rerun` may run the user's command.
    pub run_commands: bool,
    /// Where `start_export` may write.
    pub exports: ExportWrites,
}

impl Policy {
    /// Everything: the desktop app and the CLI.
    pub fn full() -> Policy {
        Policy {
            run_commands: true,
            exports: ExportWrites::Anywhere,
        }
    }

    /// `flashback serve`: commands only with `allow_run`; files only inside `export_dir`
    /// (which must be an existing directory), none without it.
    pub fn serve(allow_run: bool, export_dir: Option<&Path>) -> ApiResult<Policy> {
        let exports = match export_dir {
            None => ExportWrites::Nowhere,
            Some(dir) => {
                let canonical = dir.canonicalize().map_err(|e| {
                    ApiError::invalid(format!("--export-dir {}: {e}", dir.display()))
                })?;
                if !canonical.is_dir() {
                    return Err(ApiError::invalid(format!(
                        "--export-dir {}: not a directory",
                        dir.display()
                    )));
                }
                ExportWrites::Within(canonical)
            }
        };
        Ok(Policy {
            run_commands: allow_run,
            exports,
        })
    }

    /// May a command run?
    pub(crate) fn check_run(&self) -> ApiResult<()> {
        if self.run_commands {
            return Ok(());
        }
        Err(ApiError::new(
            ErrorCode::NotAllowed,
            "re-running starts a command on this machine, which this server does not allow: \
             restart it as `flashback serve … --allow-run` to re-run from the browser",
        ))
    }

    /// Where a conversion may write: anywhere for the desktop app and the CLI; for `flashback
    /// serve`, a SQLite file inside `--export-dir` (never a Postgres URL).
    pub(crate) fn convert_target(&self, requested: &str) -> ApiResult<String> {
        if flashback_storage::is_postgres_url(requested) {
            return match self.exports {
                ExportWrites::Anywhere => Ok(requested.to_owned()),
                _ => Err(ApiError::new(
                    ErrorCode::NotAllowed,
                    "this server converts only into a SQLite file inside its --export-dir",
                )),
            };
        }
        Ok(self.export_path(requested)?.to_string_lossy().into_owned())
    }

    /// The folder `flashback serve` confines files to (`--export-dir`), if any.
    pub(crate) fn confined_to(&self) -> Option<&Path> {
        match &self.exports {
            ExportWrites::Within(dir) => Some(dir),
            _ => None,
        }
    }

    /// The file an export of `requested` may write, or why it may not: where the policy lets
    /// files be written, and only what `outfile` may replace there.
    pub(crate) fn export_path(&self, requested: &str) -> ApiResult<PathBuf> {
        let dir = match &self.exports {
            ExportWrites::Anywhere => return crate::outfile::check(Path::new(requested), None),
            ExportWrites::Nowhere => {
                return Err(ApiError::new(
                    ErrorCode::NotAllowed,
                    "this server writes no files: export without a path to download the \
                     bundle, or restart it as `flashback serve … --export-dir DIR`",
                ))
            }
            ExportWrites::Within(dir) => dir,
        };
        let outside = || {
            ApiError::new(
                ErrorCode::NotAllowed,
                format!(
                    "{requested} is outside the export folder {} (--export-dir)",
                    dir.display()
                ),
            )
        };
        let path = Path::new(requested);
        if path.components().any(|c| matches!(c, Component::ParentDir)) {
            return Err(outside());
        }
        let full = dir.join(path); // an absolute `path` replaces `dir`
        let name = match full.components().next_back() {
            Some(Component::Normal(name)) => name.to_owned(),
            _ => return Err(ApiError::invalid(format!("{requested} is not a file name"))),
        };
        let parent = full.parent().unwrap_or(dir);
        let parent = parent
            .canonicalize()
            .map_err(|_| ApiError::not_found(format!("no such folder for {requested}")))?;
        if !parent.starts_with(dir) {
            return Err(outside());
        }
        crate::outfile::check(&parent.join(name), Some(dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_stay_inside_the_folder() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("exports");
        std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
        let p = Policy::serve(false, Some(&dir)).expect("policy");
        let inside = dir.canonicalize().expect("canonical");
        assert_eq!(
            p.export_path("a.json").expect("relative"),
            inside.join("a.json")
        );
        assert_eq!(
            p.export_path("sub/b.html").expect("below"),
            inside.join("sub").join("b.html")
        );
        let abs = inside.join("c.json");
        assert_eq!(
            p.export_path(&abs.to_string_lossy()).expect("absolute"),
            abs
        );
        for bad in ["../x.json", "sub/../../x.json", "/etc/x.json"] {
            let e = p.export_path(bad).expect_err(bad);
            assert_eq!(e.code, ErrorCode::NotAllowed, "{bad}: {e}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(tmp.path(), dir.join("escape")).expect("symlink");
            let e = p.export_path("escape/x.json").expect_err("through a link");
            assert_eq!(e.code, ErrorCode::NotAllowed, "{e}");
            std::os::unix::fs::symlink("/etc/passwd", dir.join("link.json")).expect("symlink");
            let e = p.export_path("link.json").expect_err("onto a link");
            assert_eq!(e.code, ErrorCode::NotAllowed, "{e}");
        }
        assert_eq!(
            p.export_path("missing/x.json").expect_err("missing").code,
            ErrorCode::NotFound
        );
        assert!(Policy::serve(false, Some(&tmp.path().join("nope"))).is_err());
        let none = Policy::serve(false, None).expect("policy");
        assert_eq!(
            none.export_path("a.json").expect_err("nowhere").code,
            ErrorCode::NotAllowed
        );
        assert_eq!(
            none.check_run().expect_err("no run").code,
            ErrorCode::NotAllowed
        );
        assert!(Policy::full().check_run().is_ok());
    }
}
