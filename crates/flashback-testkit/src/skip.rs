//! Skipping or failing when PostgreSQL is unavailable: [`postgres_or_skip`], the
//! [`pg_or_skip!`](crate::pg_or_skip) macro, and the `CI` / `FLASHBACK_REQUIRE_PG` switches.

use std::io::Write as _;

use crate::{postgres, TestPg, TestkitError};

/// Like [`postgres`], but when PostgreSQL is unavailable and not required (see
/// [`require_postgres`]) prints `skipping <test>: no PostgreSQL (…)` to stderr and returns
/// `None`. Panics when it is required, and on any other error.
pub async fn postgres_or_skip() -> Option<TestPg> {
    match postgres().await {
        Ok(pg) => Some(pg),
        Err(err) => match verdict(&err, require_postgres()) {
            Verdict::Skip(line) => {
                // Written to the stderr handle directly so that libtest does not capture it.
                let _ = writeln!(std::io::stderr(), "{line}");
                None
            }
            Verdict::Fail(message) => panic!("{message}"),
        },
    }
}

/// Gets a [`TestPg`] or skips the test: `let pg = pg_or_skip!();` returns from the enclosing
/// function (a test returning `()`) when PostgreSQL is unavailable and not required, and
/// panics when it is required. For tests returning a value, give it: `pg_or_skip!(Ok(()))`.
#[macro_export]
macro_rules! pg_or_skip {
    () => {
        match $crate::postgres_or_skip().await {
            ::std::option::Option::Some(pg) => pg,
            ::std::option::Option::None => return,
        }
    };
    ($ret:expr) => {
        match $crate::postgres_or_skip().await {
            ::std::option::Option::Some(pg) => pg,
            ::std::option::Option::None => return $ret,
        }
    };
}

/// Whether tests must fail rather than skip when PostgreSQL is unavailable: true when `CI`
/// is `true` (or `1`), or `FLASHBACK_REQUIRE_PG` is `1` (or `true`). `FLASHBACK_REQUIRE_PG=0`
/// turns it off even on CI.
pub fn require_postgres() -> bool {
    require_postgres_from(
        std::env::var("CI").ok().as_deref(),
        std::env::var("FLASHBACK_REQUIRE_PG").ok().as_deref(),
    )
}

pub(crate) fn require_postgres_from(ci: Option<&str>, require_pg: Option<&str>) -> bool {
    match require_pg.map(str::trim) {
        Some(v) if is_true(v) => true,
        Some(v) if v == "0" || v.eq_ignore_ascii_case("false") => false,
        _ => ci.map(str::trim).is_some_and(is_true),
    }
}

fn is_true(v: &str) -> bool {
    v == "1" || v.eq_ignore_ascii_case("true")
}

pub(crate) fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| is_true(v.trim()))
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Skip(String),
    Fail(String),
}

pub(crate) fn verdict(err: &TestkitError, required: bool) -> Verdict {
    match err {
        TestkitError::Unavailable(reason) if !required => {
            let test = std::thread::current()
                .name()
                .map(|n| format!(" {n}"))
                .unwrap_or_default();
            Verdict::Skip(format!("skipping{test}: no PostgreSQL ({reason})"))
        }
        TestkitError::Unavailable(reason) => Verdict::Fail(format!(
            "PostgreSQL is required (CI=true or FLASHBACK_REQUIRE_PG=1) but unavailable: {reason}"
        )),
        other => Verdict::Fail(format!("PostgreSQL test setup failed: {other}")),
    }
}
