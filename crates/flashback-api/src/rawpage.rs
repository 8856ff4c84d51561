//! Pages of a list left undecoded by the decode budget, read from its stored bytes: its items
//! are found without decoding them (`msgpack::ArrayIndex`), only the page's items are decoded
//! and viewed, and a search decodes one item at a time. An 80 MB message list opens in the
//! time its page takes, in the memory of its bytes (lists up to the request's decode budget,
//! as the read they stand in for). A store that cannot read one value alone, a list the view
//! changed (writes applied, a DeltaChannel rebuilt) or one that is not plain msgpack is read
//! the usual way instead (the checkpoint within the request's budget).

use crate::error::ApiResult;
use crate::types::{ChannelPage, CheckpointDetail};
use flashback_codec::msgpack::ArrayIndex;
use flashback_codec::{decode_typed, view_decoded, Decoded, ViewOptions};
use flashback_storage::{CheckpointStore, CheckpointTuple, ValueAt};
use serde_json::Value as Json;

/// Whether `v` is a list left undecoded (over the decode budget: a paged read pages it).
pub(crate) fn is_big_list(v: &Decoded) -> bool {
    matches!(v, Decoded::TooLarge { kind, .. } if kind == "list")
}

/// The stored msgpack bytes of `value`, the list at `at` in the checkpoint of `tuple` left
/// undecoded, when it is at most `max` bytes (`0`: no limit) and the store can read it alone
/// (whether they are a well-formed list, [`items`] says).
pub(crate) async fn stored_list(
    store: &dyn CheckpointStore,
    tuple: &CheckpointTuple,
    at: ValueAt<'_>,
    value: &Decoded,
    max: u64,
) -> ApiResult<Option<Vec<u8>>> {
    match value {
        Decoded::TooLarge { bytes, kind, .. } if kind == "list" && (max == 0 || *bytes <= max) => {}
        _ => return Ok(None),
    }
    let h = &tuple.header;
    let stored = store
        .stored_value(&h.thread_id, &h.checkpoint_ns, &h.checkpoint_id, at)
        .await?;
    Ok(stored.filter(|s| s.tag == "msgpack").map(|s| s.bytes))
}

/// The items of a stored msgpack list.
pub(crate) fn items(list: &[u8]) -> Option<ArrayIndex<'_>> {
    ArrayIndex::new(list).ok().flatten()
}

/// Item `i`'s view, decoded from its bytes (`None` past the end).
pub(crate) fn item_view(items: &ArrayIndex<'_>, i: usize, opts: ViewOptions) -> Json {
    let Some(item) = items.get(i) else {
        return Json::Null;
    };
    view_decoded(&decode_typed("msgpack", Some(item)), opts).unwrap_or(Json::Null)
}

/// The first `page` items of a stored list, long strings folded, with what the whole holds.
fn first_page(
    channel: &str,
    list: &[u8],
    page: u32,
    opts: ViewOptions,
) -> Option<(Json, ChannelPage)> {
    let items = items(list)?;
    let item = |i: usize| item_view(&items, i, opts);
    Some(crate::pagedview::first_page(
        channel,
        items.len(),
        item,
        page,
    ))
}

/// The first pages of a checkpoint's undecoded lists, read from their stored bytes.
pub(crate) struct FirstPages {
    channels: Vec<(String, Json, ChannelPage)>,
    writes: Vec<(String, i64, Json)>,
}

/// The first pages of every list of `tuple` (channel values and pending writes) over the
/// decode budget, each at most `max` bytes; `None` when a channel's cannot be read so (the
/// caller reads the checkpoint within the request's budget). A write's that cannot stays
/// shown as too large.
pub(crate) async fn first_pages(
    store: &dyn CheckpointStore,
    tuple: &CheckpointTuple,
    page: u32,
    max: u64,
    opts: ViewOptions,
) -> ApiResult<Option<FirstPages>> {
    let mut out = FirstPages {
        channels: Vec::new(),
        writes: Vec::new(),
    };
    for (channel, v) in &tuple.checkpoint.channel_values {
        if !is_big_list(v) {
            continue;
        }
        let at = ValueAt::Channel(channel);
        let Some(list) = stored_list(store, tuple, at, v, max).await? else {
            return Ok(None);
        };
        let Some((json, info)) = first_page(channel, &list, page, opts) else {
            return Ok(None);
        };
        out.channels.push((channel.clone(), json, info));
    }
    for w in &tuple.pending_writes {
        if !is_big_list(&w.value) {
            continue;
        }
        let at = ValueAt::Write {
            task_id: &w.task_id,
            idx: w.idx,
        };
        if let Some(list) = stored_list(store, tuple, at, &w.value, max).await? {
            if let Some((json, _)) = first_page(&w.channel, &list, page, opts) {
                out.writes.push((w.task_id.clone(), w.idx, json));
            }
        }
    }
    Ok(Some(out))
}

impl FirstPages {
    /// Put the pages into `detail` (built from the same read); `false`, leaving it as it was,
    /// when the view changed one of those channels (writes applied to it, a DeltaChannel
    /// rebuilt): its stored list is not what is shown.
    pub(crate) fn apply(self, detail: &mut CheckpointDetail) -> bool {
        let changed = |c: &str| {
            detail.rebuilt.contains_key(c)
                || detail
                    .applied
                    .iter()
                    .any(|a| a.channels.iter().any(|x| x == c))
        };
        if self.channels.iter().any(|(c, ..)| changed(c)) {
            return false;
        }
        for (channel, json, info) in self.channels {
            detail.values.insert(channel, json);
            detail.pages.push(info);
        }
        for (task_id, idx, json) in self.writes {
            let entry = detail
                .writes
                .iter_mut()
                .filter(|g| g.task_id == task_id)
                .flat_map(|g| g.writes.iter_mut())
                .find(|e| i64::from(e.idx) == idx);
            if let Some(e) = entry {
                e.value = json;
            }
        }
        true
    }
}
