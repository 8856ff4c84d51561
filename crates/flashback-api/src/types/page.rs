//! One enormous checkpoint in pages: a long list inside a channel (a 10,000-message chat) read
//! a page at a time, long strings (base64 images) folded to their length, and a search over
//! the whole list answered on the server.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use specta::Type;
use std::collections::BTreeMap;

/// Items of a page when none is asked for.
pub const DEFAULT_PAGE: u32 = 50;
/// The most items one page holds.
pub const MAX_PAGE: u32 = 1_000;
/// Strings longer than this many characters are folded in a paged answer unless asked
/// otherwise (`fold`).
pub const DEFAULT_FOLD: u32 = 16_384;
/// The most matching items a search reports.
pub const MAX_HITS: u32 = 1_000;

/// A page of the list at a path inside one checkpoint's state (or the value there), and
/// optionally where a text occurs in the whole list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct StatePageRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// Checkpoint id (default: the namespace's latest).
    #[serde(default)]
    pub checkpoint_id: Option<String>,
    /// The path: a channel, then keys and list indexes (`messages`, `messages[7].content`),
    /// the syntax of `watch` and MCP's `state` `path`.
    pub path: String,
    /// The first item of the page (0-based).
    #[serde(default)]
    pub offset: u32,
    /// Items in the page (default 50, at most 1,000).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Also search the whole list for this text (any case, as the state search matches).
    #[serde(default)]
    pub query: Option<String>,
    /// Fold strings longer than this many characters to their start and length (default
    /// 16,384; `0` folds nothing). A folded string is fetched whole by its own path.
    #[serde(default)]
    pub fold: Option<u32>,
    /// Show `SecretStr` values in plain text.
    #[serde(default)]
    pub reveal_secrets: bool,
    /// The saver's view of DeltaChannels (as `checkpoint_detail`'s `raw`).
    #[serde(default)]
    pub raw: bool,
    /// The reducer to rebuild a DeltaChannel with, per channel (as `checkpoint_detail`).
    #[serde(default)]
    pub reducers: BTreeMap<String, String>,
    /// Which view (as `checkpoint_detail`'s `live`).
    #[serde(default)]
    pub live: Option<bool>,
}

/// One item of the list that holds the text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PageHit {
    /// The item's index in the whole list.
    pub index: u32,
    /// Where in the item, in the path syntax (`messages[7].content`): its first match.
    pub path: String,
    /// The text around that match, on one line.
    pub snippet: String,
}

/// A page of a list inside a checkpoint (or, at a path that is not a list, the value there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct StatePage {
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
    /// The path, written canonically.
    pub path: String,
    /// How many items the whole list holds; `None` when the path is not a list (then `value`
    /// holds what is there, and `items` is empty).
    pub total: Option<u32>,
    /// The first item of the page.
    pub offset: u32,
    /// The page's items, in the JSON view, long strings folded.
    pub items: Vec<Json>,
    /// The value at a path that is not a list (long strings folded), else `None`.
    pub value: Option<Json>,
    /// How many strings were folded (`{"$folded": …}`), each fetched whole by its path.
    pub folded: u32,
    /// With a `query`: the items that hold it, in list order (at most 1,000).
    pub hits: Vec<PageHit>,
    /// With a `query`: how many items hold it (all of them, beyond `hits`).
    pub hit_count: u32,
}

/// A channel whose list a paged `checkpoint_detail` shows in part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ChannelPage {
    /// The channel.
    pub channel: String,
    /// Items in the whole list.
    pub total: u32,
    /// The first item shown in `values`.
    pub offset: u32,
    /// How many are shown.
    pub limit: u32,
}
