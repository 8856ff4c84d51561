//! SQL text with numbered bind parameters, run unprepared.

use sqlx::postgres::PgArguments;
use sqlx::{AssertSqlSafe, Postgres};

/// A bind parameter.
pub(super) enum Arg {
    Text(String),
    Json(serde_json::Value),
    Int(i64),
    TextArray(Vec<String>),
}

/// SQL text with its numbered parameters.
pub(super) struct Sql {
    pub(super) text: String,
    args: Vec<Arg>,
}

impl Sql {
    pub(super) fn new(text: &str) -> Sql {
        Sql {
            text: text.to_owned(),
            args: Vec::new(),
        }
    }

    /// Add a parameter; returns its placeholder (`$n`).
    pub(super) fn arg(&mut self, arg: Arg) -> String {
        self.args.push(arg);
        format!("${}", self.args.len())
    }

    pub(super) fn with(mut self, arg: Arg) -> Sql {
        self.args.push(arg);
        self
    }

    /// The query, unprepared-cached (`persistent(false)`), so that it also works through
    /// transaction-pooling proxies such as PgBouncer.
    pub(super) fn query(&self) -> sqlx::query::Query<'_, Postgres, PgArguments> {
        let mut q = sqlx::query(AssertSqlSafe(self.text.clone())).persistent(false);
        for arg in &self.args {
            q = match arg {
                Arg::Text(s) => q.bind(s.as_str()),
                Arg::Json(v) => q.bind(v),
                Arg::Int(i) => q.bind(*i),
                Arg::TextArray(a) => q.bind(a.as_slice()),
            };
        }
        q
    }
}
