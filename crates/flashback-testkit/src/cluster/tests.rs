//! Unit tests of the throwaway cluster's helpers.

use super::programs::shell_quote;
use super::*;

#[test]
fn quotes_for_sh() {
    assert_eq!(shell_quote("a b"), "'a b'");
    assert_eq!(shell_quote("it's"), r"'it'\''s'");
}

#[test]
fn url_encodes_userinfo() {
    assert_eq!(url_encode("postgres"), "postgres");
    assert_eq!(url_encode("a-b.c_d~e"), "a-b.c_d~e");
    assert_eq!(url_encode("p@ss:w/rd%é"), "p%40ss%3Aw%2Frd%25%C3%A9");
}

#[test]
fn password_is_hidden_from_debug() {
    assert_eq!(format!("{:?}", Secret("hunter2".into())), "***");
}

#[test]
fn rejects_unusable_passwords() {
    for bad in ["", "two\nlines", "cr\r", "nul\0"] {
        let err = Cluster::start_with_password(bad).unwrap_err();
        assert!(err.contains("single line"), "{err}");
    }
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

#[test]
fn rejects_unusable_configurations() {
    let file = |name: &str| ClusterConfig {
        data_files: vec![(name.to_owned(), String::new())],
        ..ClusterConfig::default()
    };
    for bad in ["", "../x", "a/b", ".hidden"] {
        let err = Cluster::start_configured(&file(bad)).unwrap_err();
        assert!(err.starts_with("not a plain file name"), "{err}");
    }
    let setting = ClusterConfig {
        settings: vec![("ssl; rm".to_owned(), "on".to_owned())],
        ..ClusterConfig::default()
    };
    let err = Cluster::start_configured(&setting).unwrap_err();
    assert!(err.starts_with("not a server setting name"), "{err}");
}
