//! `flashback store …`: LangGraph's memory Store (items by namespace and key), through the
//! `store_*` commands of `flashback_api`. A namespace is written with slashes: `users/u-1` is
//! `("users", "u-1")`.

use crate::doors::outcome::{open, render, Outcome};
use crate::human::{problems, table};
use clap::Subcommand;
use flashback_api::*;
use serde_json::Value as Json;

/// The `store` subcommands.
#[derive(Subcommand, Debug)]
pub enum StoreCommand {
    /// List items, most recently updated first.
    Ls {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://` URL.
        db: String,
        /// Only under this namespace (whole labels), e.g. `users` or `users/u-1`.
        #[arg(long, value_name = "A/B")]
        prefix: Option<String>,
        /// At most N items.
        #[arg(long)]
        limit: Option<u32>,
        /// Skip N items first.
        #[arg(long, default_value_t = 0)]
        offset: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One item: its value, times, TTL and vectors.
    Get {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://` URL.
        db: String,
        /// The namespace, e.g. `users/u-1`.
        namespace: String,
        /// The key.
        key: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Items whose value contains TEXT (case-insensitive, in the value's compact JSON text,
    /// e.g. `--query '"theme":"dark"'`). Text search: no embeddings are computed.
    Search {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://` URL.
        db: String,
        /// Only under this namespace (whole labels).
        #[arg(long, value_name = "A/B")]
        prefix: Option<String>,
        /// The text to find.
        #[arg(long, value_name = "TEXT")]
        query: String,
        /// At most N matches.
        #[arg(long)]
        limit: Option<u32>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The namespaces and how many items each holds.
    Namespaces {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://` URL.
        db: String,
        /// Only under this namespace (whole labels).
        #[arg(long, value_name = "A/B")]
        prefix: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Store an item as Python's `store.put(namespace, key, value, ttl=…)` does (one
    /// transaction). Its vectors, if any, are removed: Flashback cannot embed.
    Put {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://` URL.
        db: String,
        /// The namespace, e.g. `users/u-1`.
        namespace: String,
        /// The key.
        key: String,
        /// The value: a JSON object, e.g. `'{"theme": "dark"}'`.
        value: String,
        /// Expire it after MINUTES.
        #[arg(long, value_name = "MINUTES")]
        ttl: Option<f64>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete an item and its vectors (one transaction). Shows what would go unless `--yes`.
    Delete {
        /// A `.sqlite` file, a `postgres://` URL, a `langgraph dev` project folder or an Agent
        /// Server's `http://` URL.
        db: String,
        /// The namespace, e.g. `users/u-1`.
        namespace: String,
        /// The key.
        key: String,
        /// Really delete (without it, nothing is written and the item is shown).
        #[arg(long)]
        yes: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `users/u-1` → `["users", "u-1"]` (empty: no namespace).
fn labels(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    text.split('/').map(str::to_owned).collect()
}

fn namespace_arg(text: &str) -> Result<Vec<String>, ApiError> {
    let ns = labels(text);
    if ns.is_empty() {
        return Err(ApiError::invalid(
            "give the namespace, e.g. users/u-1 for (\"users\", \"u-1\")",
        ));
    }
    Ok(ns)
}

/// Run one `store` subcommand.
pub async fn run(cmd: StoreCommand) -> Result<Outcome, ApiError> {
    let text = match cmd {
        StoreCommand::Ls {
            db,
            prefix,
            limit,
            offset,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let req = StoreListRequest {
                db,
                prefix: labels(prefix.as_deref().unwrap_or("")),
                limit,
                offset,
            };
            render(json, &api.store_list(req).await?, |i| items(i))
        }
        StoreCommand::Get {
            db,
            namespace,
            key,
            json,
        } => {
            let namespace = namespace_arg(&namespace)?;
            let (api, db) = open(&db).await?;
            let req = StoreGetRequest { db, namespace, key };
            render(json, &api.store_get(req).await?, item)
        }
        StoreCommand::Search {
            db,
            prefix,
            query,
            limit,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let req = StoreSearchRequest {
                db,
                prefix: labels(prefix.as_deref().unwrap_or("")),
                query,
                limit,
                offset: 0,
            };
            render(json, &api.store_search(req).await?, |i| items(i))
        }
        StoreCommand::Namespaces { db, prefix, json } => {
            let (api, db) = open(&db).await?;
            let req = StoreNamespacesRequest {
                db,
                prefix: labels(prefix.as_deref().unwrap_or("")),
            };
            render(json, &api.store_namespaces(req).await?, |n| namespaces(n))
        }
        StoreCommand::Put {
            db,
            namespace,
            key,
            value,
            ttl,
            json,
        } => {
            let namespace = namespace_arg(&namespace)?;
            let value: Json = serde_json::from_str(&value)
                .map_err(|e| ApiError::invalid(format!("the value is not valid JSON ({e})")))?;
            let (api, db) = open(&db).await?;
            let req = StorePutRequest {
                db,
                namespace,
                key,
                value,
                ttl_minutes: ttl,
            };
            render(json, &api.store_put(req).await?, put)
        }
        StoreCommand::Delete {
            db,
            namespace,
            key,
            yes,
            json,
        } => {
            let namespace = namespace_arg(&namespace)?;
            let (api, db) = open(&db).await?;
            let req = StoreDeleteRequest {
                db,
                namespace,
                key,
                dry_run: !yes,
            };
            render(json, &api.store_delete(req).await?, deleted)
        }
    };
    Ok(Outcome::Done(text))
}

// ---- human output -------------------------------------------------------------------------

fn ns(namespace: &[String]) -> String {
    namespace.join("/")
}

/// `ttl 5m, expires …` / `expired …` / `-`.
fn ttl(i: &StoreItem) -> String {
    match (&i.expires_at, i.ttl_minutes) {
        (Some(at), _) if i.expired => format!("expired {at}"),
        (Some(at), _) => format!("until {at}"),
        (None, Some(m)) => format!("{m} min"),
        (None, None) => "-".into(),
    }
}

fn vectors(i: &StoreItem) -> String {
    if i.vectors.is_empty() {
        return "-".into();
    }
    i.vectors
        .iter()
        .map(|v| match v.dims {
            Some(d) => format!("{} ({d})", v.field),
            None => v.field.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `store ls`, `store search`.
pub(crate) fn items(list: &[StoreItem]) -> String {
    if list.is_empty() {
        return "no items\n".into();
    }
    let body: Vec<Vec<String>> = list
        .iter()
        .map(|i| {
            vec![
                ns(&i.namespace),
                i.key.clone(),
                i.updated_at.clone().unwrap_or_else(|| "-".into()),
                ttl(i),
                vectors(i),
                i.preview.clone(),
            ]
        })
        .collect();
    let mut out = table(
        &["NAMESPACE", "KEY", "UPDATED", "TTL", "VECTORS", "VALUE"],
        &body,
    );
    let named: Vec<String> = list
        .iter()
        .map(|i| format!("{}/{}", ns(&i.namespace), i.key))
        .collect();
    out.push_str(&problems(
        named
            .iter()
            .zip(list)
            .map(|(n, i)| (n.as_str(), i.problem.as_ref())),
    ));
    out
}

/// `store get`.
pub(crate) fn item(i: &StoreItem) -> String {
    let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let mut out = format!(
        "namespace  {}\nkey        {}\ncreated    {}\nupdated    {}\n",
        ns(&i.namespace),
        i.key,
        or_dash(&i.created_at),
        or_dash(&i.updated_at)
    );
    if i.expires_at.is_some() || i.ttl_minutes.is_some() {
        let minutes = i
            .ttl_minutes
            .map(|m| format!("{m} min, "))
            .unwrap_or_default();
        out.push_str(&format!("ttl        {minutes}{}\n", ttl(i)));
    }
    if !i.vectors.is_empty() {
        out.push_str(&format!("vectors    {}\n", vectors(i)));
    }
    if let Some(p) = &i.problem {
        out.push_str(&format!("unreadable {p}\n"));
    }
    out.push_str("value:\n");
    out.push_str(&serde_json::to_string_pretty(&i.value).unwrap_or_default());
    out.push('\n');
    out
}

/// `store namespaces`.
pub(crate) fn namespaces(list: &[StoreNamespace]) -> String {
    if list.is_empty() {
        return "no namespaces\n".into();
    }
    let body: Vec<Vec<String>> = list
        .iter()
        .map(|n| vec![ns(&n.namespace), n.items.to_string()])
        .collect();
    table(&["NAMESPACE", "ITEMS"], &body)
}

/// `store put`.
pub(crate) fn put(r: &StorePutResult) -> String {
    let mut out = format!(
        "{} {}/{}",
        if r.created { "created" } else { "updated" },
        ns(&r.item.namespace),
        r.item.key
    );
    if let Some(at) = &r.item.expires_at {
        out.push_str(&format!(" (expires {at})"));
    }
    if !r.removed_vectors.is_empty() {
        out.push_str(&format!(
            "; removed its stale vectors ({}): re-embed by putting it from the program",
            r.removed_vectors.join(", ")
        ));
    }
    out.push('\n');
    out
}

/// `store delete`.
pub(crate) fn deleted(r: &StoreDeleteResult) -> String {
    let what = format!("{}/{}", ns(&r.item.namespace), r.item.key);
    let vectors = match r.removed_vectors {
        0 => String::new(),
        1 => " and its vector".into(),
        n => format!(" and its {n} vectors"),
    };
    if r.dry_run {
        format!(
            "would delete {what}{vectors}: {} (dry run; add --yes)\n",
            r.item.preview.clone()
        )
    } else {
        format!("deleted {what}{vectors}\n")
    }
}
