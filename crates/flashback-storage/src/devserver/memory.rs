//! The dev server's memory Store (`store.pckl`: `InMemoryStore._data`,
//! `{namespace tuple: {key: langgraph.store.base.Item}}`), read-only.

use super::load::{shape, text};
use super::Shared;
use crate::layout::Backend;
use crate::memory::items::Items;
use crate::memory::{MemoryItem, MemorySchema, RawItem, Stamp};
use crate::StoreError;
use async_trait::async_trait;
use flashback_codec::pickle::{self, PyValue};
use std::collections::BTreeMap;
use std::sync::Arc;

/// An `Item`'s fields: its state is `(None, {slot: value})` (a `__slots__` class) or a dict.
fn item_fields(item: &PyValue) -> Option<BTreeMap<&str, &Arc<PyValue>>> {
    let state = match item {
        PyValue::Object { state: Some(s), .. } => s,
        _ => return None,
    };
    let dict = match state.as_seq() {
        Some([_, slots]) => slots,
        _ => state,
    };
    Some(
        dict.as_items()?
            .iter()
            .filter_map(|(k, v)| Some((k.as_str()?, v)))
            .collect(),
    )
}

/// Every item of the store file, most recently updated first, then by namespace and key.
pub(super) fn items(root: &PyValue, notes: &mut Vec<String>) -> Vec<MemoryItem> {
    let Some(namespaces) = root.as_items() else {
        notes.push(format!(
            "the memory Store file holds {}, not a dict: its items are not shown",
            shape(root)
        ));
        return Vec::new();
    };
    let now = crate::memory::time::now_micros();
    let mut out = Vec::new();
    for (ns, per_key) in namespaces {
        let labels: Vec<String> = ns
            .as_seq()
            .map(|s| s.iter().filter_map(|l| text(l)).collect())
            .unwrap_or_default();
        let Some(per_key) = per_key.as_items() else {
            continue;
        };
        for (key, item) in per_key {
            let mut raw = RawItem {
                prefix: labels.join("."),
                key: text(key).unwrap_or_default(),
                ..RawItem::default()
            };
            match item_fields(item) {
                Some(f) => {
                    let json = f.get("value").map(|v| {
                        let value = pickle::to_value(v, 1_000_000);
                        flashback_codec::view::view(&value, Default::default())
                    });
                    raw.value = json.map(|j| serde_json::to_vec(&j).unwrap_or_default());
                    let stamp = |name: &str| {
                        f.get(name)
                            .and_then(|v| pickle::iso_datetime(v))
                            .map(|t| Stamp::parse(&t))
                    };
                    raw.created_at = stamp("created_at");
                    raw.updated_at = stamp("updated_at");
                }
                None => raw.problems.push(format!(
                    "the stored item is {}, not a langgraph.store.base.Item",
                    shape(item)
                )),
            }
            out.push(raw.into_item(now));
        }
    }
    out.sort_by(|a, b| {
        (&b.updated_at, &a.namespace, &a.key).cmp(&(&a.updated_at, &b.namespace, &b.key))
    });
    out
}

/// The memory reader over the folder's snapshot.
pub(super) struct DevMemory {
    shared: Arc<Shared>,
    schema: MemorySchema,
}

impl DevMemory {
    pub(super) fn new(shared: Arc<Shared>) -> DevMemory {
        DevMemory {
            shared,
            schema: MemorySchema::without_tables(Backend::DevServer),
        }
    }
}

#[async_trait]
impl Items for DevMemory {
    fn schema(&self) -> &MemorySchema {
        &self.schema
    }

    async fn items(&self) -> Result<Arc<Vec<MemoryItem>>, StoreError> {
        Ok(Arc::clone(&self.shared.current().await?.memory))
    }
}
