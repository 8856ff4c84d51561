//! Connecting to a test server within a time limit.

use std::time::Duration;

use sqlx::{Connection as _, PgConnection};

use crate::{url, TestkitError};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection to `url`, or the error naming the server (its password redacted).
pub(crate) async fn connect(url: &str) -> Result<PgConnection, TestkitError> {
    let what = url::redact(url);
    match tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect(url)).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(TestkitError::sql(format!("connecting to {what}"), e)),
        Err(_) => Err(TestkitError::Other(format!(
            "connecting to {what}: timed out after {CONNECT_TIMEOUT:?}"
        ))),
    }
}
