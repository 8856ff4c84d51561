//! Finding the server once per test process (`FLASHBACK_TEST_PG`, the default URL, or a
//! throwaway cluster), and checking it.

use sqlx::Connection as _;
use tokio::sync::OnceCell;

use crate::connect::connect;
use crate::database::{create_database, drop_stale_databases};
use crate::{cluster, url, TestPg, TestkitError, DEFAULT_URL};

/// Returns a fresh, empty database on a PostgreSQL server found as described in the crate
/// docs. Fails with [`TestkitError::Unavailable`] when there is no server.
pub async fn postgres() -> Result<TestPg, TestkitError> {
    static SERVER: OnceCell<Result<Server, String>> = OnceCell::const_new();
    let server = SERVER
        .get_or_init(|| async {
            let env_url = std::env::var("FLASHBACK_TEST_PG")
                .ok()
                .filter(|v| !v.trim().is_empty());
            find_server(env_url.as_deref()).await
        })
        .await;
    match server {
        Ok(server) => create_database(&server.admin_url).await,
        Err(reason) => Err(TestkitError::Unavailable(reason.clone())),
    }
}

/// The server found for this process. The cluster (if any) is kept alive by being here.
pub(crate) struct Server {
    admin_url: String,
    _cluster: Option<cluster::Cluster>,
}

/// Finds a server: `env_url` (the value of `FLASHBACK_TEST_PG`) if given, else the default
/// URL, else a throwaway cluster. The error lists every attempt.
pub(crate) async fn find_server(env_url: Option<&str>) -> Result<Server, String> {
    let mut tried: Vec<String> = Vec::new();
    match env_url {
        Some(v) if v.trim() == "throwaway" => {
            tried.push("FLASHBACK_TEST_PG=throwaway: skipped the default server".into());
        }
        Some(url) => {
            return match probe(url).await {
                Ok(()) => {
                    drop_stale_databases(url).await;
                    Ok(Server {
                        admin_url: url.to_owned(),
                        _cluster: None,
                    })
                }
                Err(e) => Err(format!(
                    "FLASHBACK_TEST_PG={}: {e} (nothing else is tried when FLASHBACK_TEST_PG is set)",
                    url::redact(url)
                )),
            };
        }
        None => match probe(DEFAULT_URL).await {
            Ok(()) => {
                drop_stale_databases(DEFAULT_URL).await;
                return Ok(Server {
                    admin_url: DEFAULT_URL.to_owned(),
                    _cluster: None,
                });
            }
            Err(e) => tried.push(format!("{DEFAULT_URL}: {e}")),
        },
    }
    let started = tokio::task::spawn_blocking(cluster::Cluster::start)
        .await
        .map_err(|e| format!("throwaway cluster: start panicked: {e}"))
        .and_then(|r| r.map_err(|e| format!("throwaway cluster: {e}")));
    match started {
        Ok(cluster) => {
            let admin_url = cluster.admin_url();
            match probe(&admin_url).await {
                Ok(()) => Ok(Server {
                    admin_url,
                    _cluster: Some(cluster),
                }),
                Err(e) => {
                    tried.push(format!("throwaway cluster at {admin_url}: {e}"));
                    Err(tried.join("; "))
                }
            }
        }
        Err(e) => {
            tried.push(e);
            tried.push(
                "set FLASHBACK_TEST_PG to a postgres:// URL, or install PostgreSQL \
                 (Debian: apt-get install postgresql)"
                    .into(),
            );
            Err(tried.join("; "))
        }
    }
}

/// Connects and checks that the role may create databases.
async fn probe(url: &str) -> Result<(), String> {
    let mut conn = connect(url).await.map_err(|e| e.to_string())?;
    let may_create: Option<bool> = sqlx::query_scalar(
        "SELECT rolsuper OR rolcreatedb FROM pg_roles WHERE rolname = current_user",
    )
    .fetch_optional(&mut conn)
    .await
    .map_err(|e| format!("checking the role: {e}"))?;
    let _ = conn.close().await;
    if may_create == Some(true) {
        Ok(())
    } else {
        Err("the role may not create databases (needs CREATEDB or superuser)".into())
    }
}
