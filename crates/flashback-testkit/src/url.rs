//! Small helpers for `postgres://` URLs (no URL crate needed for what tests do).

/// Returns `url` with its database (the path) replaced by `database`; the scheme, the
/// authority (user, password, host, port) and any `?query` are kept.
pub(crate) fn with_database(url: &str, database: &str) -> Result<String, String> {
    let (scheme, authority, _path, query) = split(url)?;
    Ok(format!("{scheme}://{authority}/{database}{query}"))
}

/// Returns `url` with any password replaced by `***`, for messages.
pub(crate) fn redact(url: &str) -> String {
    let Ok((scheme, authority, path, query)) = split(url) else {
        return "<unparsable URL>".to_owned();
    };
    let authority = match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            match userinfo.find(':') {
                Some(colon) => format!("{}:***{}", &userinfo[..colon], &authority[at..]),
                None => authority.to_owned(),
            }
        }
        None => authority.to_owned(),
    };
    format!("{scheme}://{authority}{path}{query}")
}

/// Splits into (scheme, authority, path including its leading `/` or empty, query including
/// its leading `?` or empty).
fn split(url: &str) -> Result<(&str, &str, &str, &str), String> {
    let Some(scheme_end) = url.find("://") else {
        return Err(format!(
            "not a postgres:// URL (no \"://\"): {}",
            url.chars().take(40).collect::<String>()
        ));
    };
    let scheme = &url[..scheme_end];
    if scheme != "postgres" && scheme != "postgresql" {
        return Err(format!(
            "not a postgres:// or postgresql:// URL (scheme {scheme:?})"
        ));
    }
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, after) = rest.split_at(authority_end);
    let query_start = after.find('?').unwrap_or(after.len());
    let (path, query) = after.split_at(query_start);
    Ok((scheme, authority, path, query))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_database() {
        assert_eq!(
            with_database("postgresql://postgres@127.0.0.1:5432/postgres", "x").unwrap(),
            "postgresql://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            with_database("postgres://u:p@h/db?sslmode=disable", "x").unwrap(),
            "postgres://u:p@h/x?sslmode=disable"
        );
        assert_eq!(
            with_database("postgres://h:1", "x").unwrap(),
            "postgres://h:1/x"
        );
        assert_eq!(
            with_database("postgres://h?sslmode=disable", "x").unwrap(),
            "postgres://h/x?sslmode=disable"
        );
        assert_eq!(
            with_database("postgresql:///postgres?host=/run/postgresql", "x").unwrap(),
            "postgresql:///x?host=/run/postgresql"
        );
        assert!(with_database("mysql://h/db", "x").is_err());
        assert!(with_database("nonsense", "x").is_err());
    }

    #[test]
    fn redacts_password() {
        assert_eq!(
            redact("postgres://user:secret@host:5/db?a=b"),
            "postgres://user:***@host:5/db?a=b"
        );
        assert_eq!(redact("postgres://user@host/db"), "postgres://user@host/db");
        assert_eq!(redact("postgres://host"), "postgres://host");
        assert_eq!(redact("garbage:secret"), "<unparsable URL>");
    }
}
