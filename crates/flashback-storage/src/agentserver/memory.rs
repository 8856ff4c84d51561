//! The server's memory Store: every item (`POST /store/items/search`, paged by offset), read
//! again after a second ([`super::fetch::FRESH`]); put and delete are the server's own
//! `PUT`/`DELETE /store/items` (it embeds what its index says; Flashback removes nothing).

use super::fetch::{Fetcher, FRESH};
use crate::layout::Backend;
use crate::memory::items::Items;
use crate::memory::{
    DeleteOutcome, MemoryItem, MemoryRead, MemorySchema, MemoryWrite, PutOutcome, RawItem, Stamp,
};
use crate::StoreError;
use async_trait::async_trait;
use reqwest::Method;
use serde_json::{json, Value as Json};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// At most this many items are read (ten pages of the API's largest).
const MAX_ITEMS: usize = 10_000;

pub(crate) struct ServerMemory {
    fetch: Arc<Fetcher>,
    schema: MemorySchema,
    held: Mutex<Option<(Instant, Arc<Vec<MemoryItem>>)>>,
}

impl ServerMemory {
    pub(super) fn new(fetch: Arc<Fetcher>) -> ServerMemory {
        ServerMemory {
            fetch,
            schema: MemorySchema::without_tables(Backend::AgentServer),
            held: Mutex::new(None),
        }
    }

    async fn read(&self) -> Result<Vec<MemoryItem>, StoreError> {
        let now = crate::memory::time::now_micros();
        let mut out = Vec::new();
        while out.len() < MAX_ITEMS {
            let body = json!({"namespace_prefix": [], "limit": 1000, "offset": out.len()});
            let page: Json = match self.fetch.client.post("/store/items/search", &body).await {
                Ok(p) => p,
                // A server without a Store (or one that refuses this route).
                Err(StoreError::NotFound(_)) => break,
                Err(e) => return Err(e),
            };
            let items = page
                .get("items")
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default();
            let n = items.len();
            out.extend(items.iter().map(|i| item(i, now)));
            if n < 1000 {
                break;
            }
        }
        out.sort_by(|a, b| {
            (&b.updated_at, &a.namespace, &a.key).cmp(&(&a.updated_at, &b.namespace, &b.key))
        });
        Ok(out)
    }
}

fn item(i: &Json, now: i64) -> MemoryItem {
    let text = |k: &str| i.get(k).and_then(Json::as_str);
    let labels: Vec<String> = i
        .get("namespace")
        .and_then(Json::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|l| l.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    RawItem {
        prefix: labels.join("."),
        key: text("key").unwrap_or_default().to_owned(),
        value: i
            .get("value")
            .map(|v| serde_json::to_vec(v).unwrap_or_default()),
        created_at: text("created_at").map(Stamp::parse),
        updated_at: text("updated_at").map(Stamp::parse),
        ..RawItem::default()
    }
    .into_item(now)
}

#[async_trait]
impl Items for ServerMemory {
    fn schema(&self) -> &MemorySchema {
        &self.schema
    }

    async fn items(&self) -> Result<Arc<Vec<MemoryItem>>, StoreError> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some((at, items)) = held {
            if at.elapsed() < FRESH {
                return Ok(items);
            }
        }
        let items = Arc::new(self.read().await?);
        *self.held.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((Instant::now(), Arc::clone(&items)));
        Ok(items)
    }
}

impl ServerMemory {
    fn forget(&self) {
        *self.held.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    async fn current(
        &self,
        namespace: &[String],
        key: &str,
    ) -> Result<Option<MemoryItem>, StoreError> {
        self.forget();
        MemoryRead::get(self, namespace, key).await
    }
}

#[async_trait]
impl MemoryWrite for ServerMemory {
    async fn put(
        &self,
        namespace: &[String],
        key: &str,
        value: &Json,
        ttl_minutes: Option<f64>,
    ) -> Result<PutOutcome, StoreError> {
        let created = self.current(namespace, key).await?.is_none();
        let mut body = json!({"namespace": namespace, "key": key, "value": value});
        if let Some(ttl) = ttl_minutes {
            body["ttl"] = json!(ttl);
        }
        self.fetch
            .client
            .send(Method::PUT, "/store/items", Some(&body))
            .await?;
        let item = self.current(namespace, key).await?.ok_or_else(|| {
            StoreError::Query(format!(
                "{} stored the item but does not list it",
                self.fetch.client.base()
            ))
        })?;
        Ok(PutOutcome {
            item,
            created,
            removed_vectors: Vec::new(),
        })
    }

    async fn delete(
        &self,
        namespace: &[String],
        key: &str,
    ) -> Result<Option<DeleteOutcome>, StoreError> {
        let Some(item) = self.current(namespace, key).await? else {
            return Ok(None);
        };
        let body = json!({"namespace": namespace, "key": key});
        self.fetch
            .client
            .send(Method::DELETE, "/store/items", Some(&body))
            .await?;
        self.forget();
        Ok(Some(DeleteOutcome {
            item,
            removed_vectors: 0,
        }))
    }
}
