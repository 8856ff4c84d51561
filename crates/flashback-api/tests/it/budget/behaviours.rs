//! The decode budget, one behaviour written once and run on each layout that stores values
//! differently: Python's saver (a msgpack value per channel) and LangGraph.js's (every value
//! inside one JSON checkpoint document). A value over the budget is its size and kind, the rest
//! of the checkpoint reads as always, and opening it on purpose decodes it. What only one
//! layout shows is in its file, which runs the behaviour with its [`Layout`].

use crate::common;

use common::*;
use flashback_api::{Api, CheckpointDetail, CheckpointRequest, DbInfo, Initial, SetSettingRequest};

/// A layout: where a big value is spliced in, and what only it shows (each layout's file has
/// its own).
pub(super) struct Layout {
    /// Copies the layout's fixture into the directory and splices a value over 1 MB into one
    /// checkpoint: the copy, that checkpoint's id and the value's stored size.
    pub splice: fn(&std::path::Path) -> (std::path::PathBuf, String, u64),
    pub thread: &'static str,
    pub channel: &'static str,
    /// The big value's kind.
    pub kind: &'static str,
    /// Checks what only this layout shows, on the checkpoint as read and as opened whole.
    pub also: fn(&Spliced, &CheckpointDetail, &CheckpointDetail),
}

/// A copy of the layout's fixture with a value over the 1 MB budget spliced into one
/// checkpoint, opened by an API whose budget is 1 MB.
pub(super) struct Spliced {
    pub _dir: tempfile::TempDir,
    pub api: Api,
    pub db: DbInfo,
    /// The checkpoint holding the big value.
    pub id: String,
    pub thread: &'static str,
    pub channel: &'static str,
    /// The big value's stored size, and its kind.
    pub bytes: u64,
    pub kind: &'static str,
}

/// A checkpoint of `thread` (its head without `id`), whole when `full`.
pub(super) fn req(db: &DbInfo, thread: &str, id: Option<&str>, full: bool) -> CheckpointRequest {
    CheckpointRequest {
        live: None,
        page: None,
        db: db.db.clone(),
        thread_id: thread.into(),
        checkpoint_ns: String::new(),
        checkpoint_id: id.map(Into::into),
        reveal_secrets: false,
        full,
        raw: false,
        reducers: Default::default(),
        allow_locked: false,
    }
}

impl Spliced {
    pub async fn new(layout: &Layout) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (path, id, bytes) = (layout.splice)(dir.path());
        let api = api_in(dir.path(), Initial::None);
        api.set_setting(SetSettingRequest {
            key: "max_value_mb".into(),
            value: Some("1".into()),
        })
        .await
        .unwrap();
        let db = open(&api, path.to_str().unwrap()).await;
        Spliced {
            _dir: dir,
            api,
            db,
            id,
            thread: layout.thread,
            channel: layout.channel,
            bytes,
            kind: layout.kind,
        }
    }

    /// The checkpoint `id` of the spliced thread, whole when `full`.
    pub fn req(&self, id: &str, full: bool) -> CheckpointRequest {
        req(&self.db, self.thread, Some(id), full)
    }

    pub async fn detail(&self, full: bool) -> CheckpointDetail {
        self.api
            .checkpoint_detail(self.req(&self.id, full))
            .await
            .unwrap()
    }
}

/// A value over the budget is its size and kind, the rest reads, and it opens on purpose.
pub(super) async fn over_the_budget(layout: &Layout) {
    let s = Spliced::new(layout).await;
    let d = s.detail(false).await;
    assert_eq!(d.problem, None, "the checkpoint itself reads");
    let big = &d.values[s.channel];
    assert_eq!(big["$too_large"]["bytes"], s.bytes, "{big}");
    assert_eq!(big["$too_large"]["reason"], "value", "{big}");
    assert_eq!(big["$type"], s.kind);
    // The channel's size and kind are the value's, as for any other.
    let info = d.channels.iter().find(|c| c.channel == s.channel).unwrap();
    assert_eq!(info.type_name, s.kind);
    assert_eq!(u64::from(info.size), s.bytes);
    // The other channels decode as always.
    assert!(d.values["log"].is_array(), "{:?}", d.values.keys());

    // Opened on purpose: the whole value.
    let full = s.detail(true).await;
    assert!(full.values[s.channel].get("$too_large").is_none());
    // What only this layout shows.
    (layout.also)(&s, &d, &full);
}
