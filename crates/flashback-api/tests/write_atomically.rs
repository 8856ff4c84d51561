//! `write_atomically`: readers and concurrent writers only ever see a complete file.

use flashback_api::write_atomically;

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
