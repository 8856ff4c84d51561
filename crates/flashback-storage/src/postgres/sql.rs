//! SQL text with numbered bind parameters, run unprepared.

use sqlx::postgres::PgArguments;
use sqlx::{AssertSqlSafe, Postgres};

/// A bind parameter.
pub(crate) enum Arg {
    Text(String),
    Json(serde_json::Value),
    Int(i64),
    TextArray(Vec<String>),
}

/// SQL text with its numbered parameters.
pub(crate) struct Sql {
    pub(crate) text: String,
    args: Vec<Arg>,
}

impl Sql {
    pub(crate) fn new(text: &str) -> Sql {
        Sql {
            text: text.to_owned(),
            args: Vec::new(),
        }
    }

    /// Add a parameter; returns its placeholder (`$n`).
    pub(crate) fn arg(&mut self, arg: Arg) -> String {
        self.args.push(arg);
        format!("${}", self.args.len())
    }

    pub(crate) fn with(mut self, arg: Arg) -> Sql {
        self.args.push(arg);
        self
    }

    /// The query, unprepared-cached (`persistent(false)`), so that it also works through
    /// transaction-pooling proxies such as PgBouncer.
    pub(crate) fn query(&self) -> sqlx::query::Query<'_, Postgres, PgArguments> {
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
