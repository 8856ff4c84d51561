//! LangGraph's memory Store: list, get, search and the namespace tree (through the session's
//! read-only connection), put and delete (each one transaction on a connection opened for
//! it, like the other writes).

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::types::{
    self, StoreDeleteRequest, StoreDeleteResult, StoreGetRequest, StoreItem, StoreListRequest,
    StoreNamespace, StoreNamespacesRequest, StorePutRequest, StorePutResult, StoreSearchRequest,
};
use crate::{Api, Session};
use flashback_storage::memory::{MemoryRead, Page};
use std::sync::Arc;

/// A namespace as the user writes it: `users/u-1`.
fn shown(namespace: &[String]) -> String {
    namespace.join("/")
}

fn item_not_found(namespace: &[String], key: &str) -> ApiError {
    ApiError::not_found(format!(
        "no item {key:?} in namespace {:?} of the memory store",
        shown(namespace)
    ))
}

/// The session's memory Store, or why there is none.
fn memory(s: &Session) -> ApiResult<&dyn MemoryRead> {
    s.store.memory().ok_or_else(|| {
        ApiError::new(
            ErrorCode::UnsupportedSchema,
            format!(
                "{} holds no LangGraph memory store (no `store` table)",
                s.info.display_name
            ),
        )
    })
}

fn items(list: Vec<flashback_storage::memory::MemoryItem>) -> Vec<StoreItem> {
    list.into_iter().map(StoreItem::from).collect()
}

impl Api {
    fn store_session(&self, db: &str) -> ApiResult<Arc<Session>> {
        let s = self.session(db)?;
        memory(&s)?;
        Ok(s)
    }

    /// Items under a namespace prefix, most recently updated first.
    pub async fn store_list(&self, req: StoreListRequest) -> ApiResult<Vec<StoreItem>> {
        let s = self.store_session(&req.db)?;
        let page = Page {
            limit: req.limit,
            offset: req.offset,
        };
        Ok(items(memory(&s)?.list(&req.prefix, page).await?))
    }

    /// One item (not found: [`ErrorCode::NotFound`]).
    pub async fn store_get(&self, req: StoreGetRequest) -> ApiResult<StoreItem> {
        let s = self.store_session(&req.db)?;
        memory(&s)?
            .get(&req.namespace, &req.key)
            .await?
            .map(StoreItem::from)
            .ok_or_else(|| item_not_found(&req.namespace, &req.key))
    }

    /// Items whose value's JSON text contains the query, case-insensitively.
    pub async fn store_search(&self, req: StoreSearchRequest) -> ApiResult<Vec<StoreItem>> {
        let s = self.store_session(&req.db)?;
        let page = Page {
            limit: req.limit,
            offset: req.offset,
        };
        Ok(items(
            memory(&s)?.search(&req.prefix, &req.query, page).await?,
        ))
    }

    /// The namespaces under a prefix with their item counts.
    pub async fn store_namespaces(
        &self,
        req: StoreNamespacesRequest,
    ) -> ApiResult<Vec<StoreNamespace>> {
        let s = self.store_session(&req.db)?;
        Ok(memory(&s)?
            .namespaces(&req.prefix)
            .await?
            .into_iter()
            .map(|n| StoreNamespace {
                namespace: n.namespace,
                items: types::count(n.items),
            })
            .collect())
    }

    /// Store an item as Python's `store.put` does. One transaction.
    pub async fn store_put(&self, req: StorePutRequest) -> ApiResult<StorePutResult> {
        let s = self.store_session(&req.db)?;
        let writer = flashback_storage::open_memory_writable(&s.connect).await?;
        let done = writer
            .put(&req.namespace, &req.key, &req.value, req.ttl_minutes)
            .await?;
        Ok(StorePutResult {
            item: done.item.into(),
            created: done.created,
            removed_vectors: done.removed_vectors,
        })
    }

    /// Delete an item and its vectors (or, with `dry_run`, show what would go). One
    /// transaction.
    pub async fn store_delete(&self, req: StoreDeleteRequest) -> ApiResult<StoreDeleteResult> {
        let s = self.store_session(&req.db)?;
        if req.dry_run {
            let item = memory(&s)?
                .get(&req.namespace, &req.key)
                .await?
                .ok_or_else(|| item_not_found(&req.namespace, &req.key))?;
            return Ok(StoreDeleteResult {
                removed_vectors: types::count(item.vectors.len()),
                item: item.into(),
                dry_run: true,
            });
        }
        let writer = flashback_storage::open_memory_writable(&s.connect).await?;
        let done = writer
            .delete(&req.namespace, &req.key)
            .await?
            .ok_or_else(|| item_not_found(&req.namespace, &req.key))?;
        Ok(StoreDeleteResult {
            item: done.item.into(),
            removed_vectors: types::count(done.removed_vectors),
            dry_run: false,
        })
    }
}
