//! `postgres://` URL helpers: thin wrappers over [`flashback_storage::pgurl`] (its tests cover
//! these cases).

use flashback_storage::pgurl::PgUrl;

/// Returns `url` with its database (the path) replaced by `database`; the scheme, the
/// authority (user, password, host, port) and any `?query` are kept.
pub(crate) fn with_database(url: &str, database: &str) -> Result<String, String> {
    PgUrl::parse(url)
        .map(|u| u.with_database(database))
        .map_err(|e| e.to_string())
}

/// Returns `url` with any password replaced by `***`, for messages.
pub(crate) fn redact(url: &str) -> String {
    PgUrl::parse(url).map_or_else(|_| "<unparsable URL>".to_owned(), |u| u.redacted())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrappers() {
        assert_eq!(
            with_database("postgres://u:p@h/db?sslmode=disable", "x").unwrap(),
            "postgres://u:p@h/x?sslmode=disable"
        );
        assert!(with_database("nonsense", "x").is_err());
        assert_eq!(
            redact("postgres://user:secret@host:5/db?a=b"),
            "postgres://user:***@host:5/db?a=b"
        );
        assert_eq!(redact("garbage:secret"), "<unparsable URL>");
    }
}
