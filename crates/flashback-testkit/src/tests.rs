//! Unit tests of the testkit's private helpers.

use super::*;
use crate::database::{database_created_at, new_database_name, quote_ident, unix_now};
use crate::dump::prepare_dump;
use crate::server::find_server;
use crate::skip::{require_postgres_from, verdict, Verdict};

#[test]
fn require_postgres_reads_ci_and_override() {
    assert!(!require_postgres_from(None, None));
    assert!(require_postgres_from(Some("true"), None));
    assert!(require_postgres_from(Some("TRUE"), None));
    assert!(require_postgres_from(Some("1"), None));
    assert!(!require_postgres_from(Some("false"), None));
    assert!(!require_postgres_from(Some(""), None));
    assert!(require_postgres_from(None, Some("1")));
    assert!(require_postgres_from(Some("false"), Some("1")));
    assert!(!require_postgres_from(Some("true"), Some("0")));
    assert!(require_postgres_from(Some("true"), Some("")));
}

#[tokio::test]
async fn bogus_env_url_is_unavailable_and_skips_or_fails() {
    // Port 1 on loopback refuses connections; nothing else may be tried.
    let bogus = "postgresql://nobody:hunter2@127.0.0.1:1/nowhere";
    let reason = match find_server(Some(bogus)).await {
        Ok(_) => panic!("a server answered on 127.0.0.1:1"),
        Err(reason) => reason,
    };
    assert!(reason.contains("FLASHBACK_TEST_PG="), "{reason}");
    assert!(reason.contains("127.0.0.1:1"), "{reason}");
    assert!(!reason.contains("hunter2"), "password leaked: {reason}");
    assert!(!reason.contains(DEFAULT_URL), "{reason}");

    let err = TestkitError::Unavailable(reason);
    match verdict(&err, false) {
        Verdict::Skip(line) => {
            assert!(line.starts_with("skipping"), "{line}");
            assert!(line.contains("no PostgreSQL ("), "{line}");
            assert!(line.contains("127.0.0.1:1"), "{line}");
        }
        other => panic!("expected a skip, got {other:?}"),
    }
    match verdict(&err, true) {
        Verdict::Fail(message) => {
            assert!(message.contains("required"), "{message}");
            assert!(message.contains("127.0.0.1:1"), "{message}");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    // Errors other than "unavailable" always fail.
    let other = TestkitError::Other("boom".into());
    assert!(matches!(verdict(&other, false), Verdict::Fail(_)));
}

#[test]
fn database_names_are_unique_and_dated() {
    let a = new_database_name();
    let b = new_database_name();
    assert_ne!(a, b);
    assert!(a.starts_with(DB_PREFIX));
    assert!(a.len() < 63, "{a}");
    assert!(a
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
    let created = database_created_at(&a).unwrap();
    assert!(unix_now().abs_diff(created) < 5);
    assert_eq!(database_created_at("fbtest_12_3_4_abcdef"), Some(12));
    assert_eq!(database_created_at("other_12"), None);
    assert_eq!(database_created_at("fbtest_x"), None);
}

#[test]
fn dump_preparation() {
    let dump = "\\restrict abc\nSET x = 1;\nINSERT INTO t VALUES ('a');\n\\unrestrict abc\n";
    assert_eq!(
        prepare_dump(dump).unwrap(),
        "SET x = 1;\nINSERT INTO t VALUES ('a');\n"
    );
    assert!(prepare_dump("COPY public.t (x) FROM stdin;\n1\n\\.\n").is_err());
    assert!(prepare_dump("\\connect other\n").is_err());
}

#[test]
fn idents_are_quoted() {
    assert_eq!(quote_ident("a"), "\"a\"");
    assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
}
