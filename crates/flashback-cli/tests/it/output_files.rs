//! `-o` and other output paths of the CLI: only a regular file (or a new name) is ever replaced —
//! a FIFO, a device, a directory stay what they are and the command fails with one line — and a
//! link is followed to the regular file it names. The same rules hold in the app (the same API
//! function) and, stricter, in `serve` (`serve/output_files.rs`).
#![cfg(unix)]

use crate::common;
use common::*;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn kind(p: &Path) -> std::fs::FileType {
    std::fs::symlink_metadata(p)
        .expect("still there")
        .file_type()
}

#[test]
fn export_and_convert_replace_only_regular_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = sqlite();
    let fifo = dir.path().join("pipe.json");
    mkfifo(&fifo);
    let folder = dir.path().join("folder.json");
    std::fs::create_dir(&folder).expect("mkdir");
    let dangling = dir.path().join("dangling.json");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).expect("symlink");
    let device = Path::new("/dev/null");
    for (target, says) in [
        (fifo.as_path(), "a FIFO"),
        (folder.as_path(), "a directory"),
        (device, "a device"),
        (dangling.as_path(), "a symbolic link to nothing"),
    ] {
        let t = text(target);
        fails(&["export", &db, "forked", "-o", &t], 2, says);
        fails(
            &[
                "convert",
                &db,
                &t,
                "--to",
                "three-table",
                "--thread",
                "forked",
            ],
            2,
            says,
        );
    }
    assert!(kind(&fifo).is_fifo());
    assert!(kind(&folder).is_dir());
    assert!(kind(device).is_char_device());
    assert!(kind(&dangling).is_symlink() && !dir.path().join("nowhere").exists());

    // Missing folder: not found; a folder that takes no new file: an I/O error. Nothing made.
    let missing = dir.path().join("missing").join("x.json");
    fails(
        &["export", &db, "forked", "-o", &text(&missing)],
        3,
        "no such folder",
    );
    let locked = read_only_folder(dir.path()).join("flashback-x.json");
    fails(
        &["export", &db, "forked", "-o", &text(&locked)],
        1,
        "cannot write",
    );
    fails(
        &["convert", &db, &text(&locked), "--to", "three-table"],
        1,
        "cannot write",
    );
    assert!(!locked.exists() && !missing.exists());
}

#[test]
fn a_link_is_followed_and_a_hard_link_is_not_written_through() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = sqlite();
    // A symbolic link to a regular file elsewhere: that file is replaced, the link stays.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    let real = elsewhere.join("bundle.json");
    std::fs::write(&real, "old").expect("write");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let out = flashback(&["export", &db, "forked", "-o", &text(&link)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(kind(&link).is_symlink());
    assert!(json_ok(&["verify", &text(&real), "--json"])["ok"] == true);

    // A hard link: the name given is replaced (a new file), the other name keeps its content.
    let kept = dir.path().join("kept.json");
    std::fs::write(&kept, "kept").expect("write");
    let other_name = dir.path().join("other-name.json");
    std::fs::hard_link(&kept, &other_name).expect("hard link");
    let out = flashback(&["export", &db, "forked", "-o", &text(&other_name)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&kept).expect("read"), "kept");
    assert!(std::fs::read_to_string(&other_name)
        .expect("read")
        .contains("flashback-audit"));
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(names.is_empty(), "temporary files left: {names:?}");
}
