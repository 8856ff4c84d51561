//! `flashback state … --path messages --offset N --limit M [--find TEXT]`: a page of a long
//! list inside one checkpoint (`state_page`), and where a text occurs in all of it.

use flashback_api::*;

/// The paging arguments of `flashback state`.
#[derive(clap::Args, Debug, Default)]
pub struct PageArgs {
    /// Show a page of the list at this path (`messages`, `messages[7].content`; the value
    /// there when it is not a list) instead of the whole checkpoint.
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,
    /// With --path: the first item of the page (0-based).
    #[arg(long, value_name = "N", requires = "path")]
    pub offset: Option<u32>,
    /// With --path: items in the page (default 50, at most 1000).
    #[arg(long, value_name = "N", requires = "path")]
    pub limit: Option<u32>,
    /// With --path: the items of the whole list that hold TEXT (any case).
    #[arg(long, value_name = "TEXT", requires = "path")]
    pub find: Option<String>,
    /// With --path: fold strings longer than N characters (default 16384; 0 for none).
    #[arg(long, value_name = "N", requires = "path")]
    pub fold: Option<u32>,
}

/// What a paged `state` reads besides its paging arguments.
pub(crate) struct Target {
    pub db: String,
    pub thread: String,
    pub ns: String,
    pub checkpoint: Option<String>,
    pub reveal_secrets: bool,
    pub raw: bool,
    pub reducers: std::collections::BTreeMap<String, String>,
}

/// The request of a paged `state`.
pub(crate) fn request(t: Target, path: String, a: &PageArgs) -> StatePageRequest {
    StatePageRequest {
        db: t.db,
        thread_id: t.thread,
        checkpoint_ns: t.ns,
        checkpoint_id: t.checkpoint,
        path,
        offset: a.offset.unwrap_or(0),
        limit: a.limit,
        query: a.find.clone(),
        fold: a.fold,
        reveal_secrets: t.reveal_secrets,
        raw: t.raw,
        reducers: t.reducers,
        live: None,
    }
}
