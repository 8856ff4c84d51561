//! A memory Store read from a list of all its items ([`Items`]): the `langgraph dev` folder's
//! `store.pckl`, an Agent Server's `/store/items/search`. Filtering, paging and counting are
//! done here, once for both.

use super::{
    matches, needle, paged, under, MemoryItem, MemoryRead, MemorySchema, MemorySummary,
    NamespaceCount, Page,
};
use crate::StoreError;
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Arc;

fn prefix_of(prefix: &[String]) -> String {
    prefix.join(".")
}

/// A memory Store whose items are read all at once (a snapshot of files, or a server's API).
#[async_trait]
pub(crate) trait Items: Send + Sync {
    /// What it holds.
    fn schema(&self) -> &MemorySchema;

    /// Every item, most recently updated first, then by namespace and key.
    async fn items(&self) -> Result<Arc<Vec<MemoryItem>>, StoreError>;
}

#[async_trait]
impl<T: Items> MemoryRead for T {
    fn schema(&self) -> &MemorySchema {
        Items::schema(self)
    }

    async fn summary(&self) -> Result<MemorySummary, StoreError> {
        let items = self.items().await?;
        let mut namespaces: Vec<&Vec<String>> = items.iter().map(|i| &i.namespace).collect();
        namespaces.sort();
        namespaces.dedup();
        Ok(MemorySummary {
            items: items.len() as u64,
            namespaces: namespaces.len() as u64,
        })
    }

    async fn list(&self, prefix: &[String], page: Page) -> Result<Vec<MemoryItem>, StoreError> {
        self.search(prefix, "", page).await
    }

    async fn get(&self, namespace: &[String], key: &str) -> Result<Option<MemoryItem>, StoreError> {
        let items = self.items().await?;
        Ok(items
            .iter()
            .find(|i| i.namespace == namespace && i.key == key)
            .cloned())
    }

    async fn search(
        &self,
        prefix: &[String],
        query: &str,
        page: Page,
    ) -> Result<Vec<MemoryItem>, StoreError> {
        let items = self.items().await?;
        let (prefix, needle) = (prefix_of(prefix), needle(query));
        Ok(paged(
            items
                .iter()
                .filter(|i| under(&prefix_of(&i.namespace), &prefix) && matches(i, &needle))
                .map(|i| i.clone().listed()),
            page,
        ))
    }

    async fn namespaces(&self, prefix: &[String]) -> Result<Vec<NamespaceCount>, StoreError> {
        let items = self.items().await?;
        let prefix = prefix_of(prefix);
        let mut counts: BTreeMap<&Vec<String>, u64> = BTreeMap::new();
        for i in items
            .iter()
            .filter(|i| under(&prefix_of(&i.namespace), &prefix))
        {
            *counts.entry(&i.namespace).or_default() += 1;
        }
        Ok(counts
            .into_iter()
            .map(|(namespace, items)| NamespaceCount {
                namespace: namespace.clone(),
                items,
            })
            .collect())
    }
}
