//! `write_atomically`: readers and concurrent writers only ever see a complete file, and only a
//! regular file (or a new name) is ever replaced.

use flashback_api::{write_atomically, ErrorCode};

#[test]
fn concurrent_writes_to_one_path_each_land_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("export.json");
    // Different lengths, so a mix of two writes could not pass for either.
    let contents: Vec<Vec<u8>> = (0..8u8)
        .map(|i| vec![b'a' + i; 200_000 + usize::from(i) * 1_000])
        .collect();
    for _round in 0..10 {
        std::thread::scope(|s| {
            for c in &contents {
                let path = &path;
                s.spawn(move || write_atomically(path, c).expect("every write succeeds"));
            }
        });
        let got = std::fs::read(&path).expect("read");
        assert!(
            contents.contains(&got),
            "the file is one complete write ({} bytes)",
            got.len()
        );
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["export.json"], "no temporary files are left");
}

#[test]
fn a_missing_folder_is_a_clear_error_and_nothing_is_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("no-such-folder").join("export.json");
    let err = write_atomically(&path, b"{}").expect_err("no folder");
    assert!(err.message.contains("cannot write"), "{}", err.message);
    assert!(!dir.path().join("no-such-folder").exists());
}

/// A FIFO at `path` (`mkfifo`).
#[cfg(unix)]
fn mkfifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

#[cfg(unix)]
#[test]
fn what_is_not_a_regular_file_is_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("pipe.json");
    mkfifo(&fifo);
    let folder = dir.path().join("folder.json");
    std::fs::create_dir(&folder).expect("mkdir");
    let dangling = dir.path().join("dangling.json");
    std::os::unix::fs::symlink(dir.path().join("nothing-here"), &dangling).expect("symlink");
    let to_fifo = dir.path().join("to-pipe.json");
    std::os::unix::fs::symlink(&fifo, &to_fifo).expect("symlink");
    let device = std::path::Path::new("/dev/null");
    for (path, says) in [
        (&fifo, "a FIFO"),
        (&folder, "a directory"),
        (&to_fifo, "a FIFO"),
        (&device.to_path_buf(), "a device"),
        (&dangling, "a symbolic link to nothing"),
    ] {
        // Refused before anything is opened: a FIFO with no reader would block a writer.
        let e = write_atomically(path, b"{}").expect_err(&path.display().to_string());
        assert_eq!(e.code, ErrorCode::InvalidInput, "{}: {e}", path.display());
        assert!(e.message.contains(says), "{}: {e}", path.display());
        assert_eq!(e.message.lines().count(), 1);
    }
    // Everything is what it was.
    let kind = |p: &std::path::Path| {
        std::fs::symlink_metadata(p)
            .expect("still there")
            .file_type()
    };
    assert!(kind(&fifo).is_fifo());
    assert!(kind(&folder).is_dir());
    assert!(kind(&to_fifo).is_symlink() && kind(&dangling).is_symlink());
    assert!(kind(device).is_char_device());
    assert!(!dir.path().join("nothing-here").exists());
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["dangling.json", "folder.json", "pipe.json", "to-pipe.json"],
        "no temporary file is left"
    );
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_is_followed_to_the_file_it_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    let real = elsewhere.join("report.json");
    std::fs::write(&real, "old").expect("write");
    let link = dir.path().join("report.json");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    write_atomically(&link, b"new").expect("through the link");
    assert!(std::fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&real).expect("read"), "new");
    // A replaced file keeps its permissions.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    write_atomically(&real, b"newer").expect("the file itself");
    let mode = std::fs::metadata(&real).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(std::fs::read_to_string(&link).expect("read"), "newer");
}

#[cfg(target_os = "linux")]
#[test]
fn a_folder_that_takes_no_new_file_is_a_clear_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).expect("mkdir");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    // Root writes into a 0555 folder anyway: then sysfs, which takes no new file from anyone.
    let privileged = std::fs::write(locked.join("probe"), "").is_ok();
    let folder = if privileged {
        std::path::PathBuf::from("/sys")
    } else {
        locked.clone()
    };
    let path = folder.join("flashback-export.json");
    let e = write_atomically(&path, b"{}").expect_err("read-only folder");
    assert_eq!(e.code, ErrorCode::Io, "{e}");
    assert!(e.message.contains("cannot write"), "{e}");
    assert!(!path.exists());
    let _ = std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755));
}
