//! One enormous checkpoint, a page at a time: `state_page` pages the list at a path (a list
//! over the decode budget too, paged from its stored bytes), searches all of it on
//! the server, folds long strings; `checkpoint_detail` with `page` shows a long list's first
//! page and says so in `pages`. Odd paths and values are one-line errors or an empty page.

use crate::common;
use common::*;
use flashback_api::{Api, CheckpointRequest, DbInfo, ErrorCode, Initial, SetSettingRequest};
use flashback_api::{StatePage, StatePageRequest};
use flashback_testkit::bigvalue;
use serde_json::{json, Value as Json};

pub(crate) fn ask(db: &DbInfo, thread: &str, path: &str) -> StatePageRequest {
    StatePageRequest {
        db: db.db.clone(),
        thread_id: thread.into(),
        checkpoint_ns: String::new(),
        checkpoint_id: None,
        path: path.into(),
        offset: 0,
        limit: None,
        query: None,
        fold: None,
        reveal_secrets: false,
        raw: false,
        reducers: Default::default(),
        live: None,
    }
}

/// The checkpoint of `thread` (its head without `id`), whole when `full`.
fn req(db: &DbInfo, thread: &str, id: Option<&str>, full: bool) -> CheckpointRequest {
    CheckpointRequest {
        db: db.db.clone(),
        thread_id: thread.into(),
        checkpoint_ns: String::new(),
        checkpoint_id: id.map(Into::into),
        reveal_secrets: false,
        full,
        raw: false,
        reducers: Default::default(),
        allow_locked: false,
        live: None,
        page: None,
    }
}

async fn page(api: &Api, r: StatePageRequest) -> StatePage {
    api.state_page(r).await.expect("page")
}

#[tokio::test]
async fn a_message_list_pages_and_is_searched_whole() {
    let f = opened_fixture().await;
    let (api, db) = (&f.api, &f.db);
    let whole = api
        .checkpoint_detail(req(db, "chat-tools", None, false))
        .await
        .unwrap();
    let messages = whole.values["messages"].as_array().unwrap().clone();
    let n = messages.len();
    assert!(n >= 3, "{n}");
    assert!(whole.pages.is_empty());
    assert!(serde_json::to_value(&whole).unwrap().get("pages").is_none());

    let p = page(
        api,
        StatePageRequest {
            offset: 1,
            limit: Some(2),
            ..ask(db, "chat-tools", "messages")
        },
    )
    .await;
    assert_eq!((p.total, p.offset), (Some(n as u32), 1));
    assert_eq!(p.items, messages[1..3].to_vec());
    assert_eq!(p.checkpoint_id, whole.checkpoint_id);
    let past = page(
        api,
        StatePageRequest {
            offset: 500,
            ..ask(db, "chat-tools", "messages")
        },
    )
    .await;
    assert_eq!((past.total, past.items.len()), (Some(n as u32), 0));

    // The search: every item holding the text, by index, whichever page is shown.
    let last = messages[n - 1]["id"].as_str().expect("an id").to_owned();
    let q = StatePageRequest {
        limit: Some(1),
        query: Some(last.to_uppercase()),
        ..ask(db, "chat-tools", "messages")
    };
    let found = page(api, q).await;
    assert_eq!(found.items.len(), 1);
    assert!(
        found.hits.iter().any(|h| h.index as usize == n - 1),
        "{:?}",
        found.hits
    );
    assert_eq!(found.hit_count as usize, found.hits.len());
    let hit = found
        .hits
        .iter()
        .find(|h| h.index as usize == n - 1)
        .unwrap();
    assert!(
        hit.path.starts_with(&format!("messages[{}]", n - 1)),
        "{}",
        hit.path
    );

    // Inside an item: the value there, or a page of the list there.
    let inner = page(api, ask(db, "chat-tools", "messages[1]")).await;
    assert_eq!(
        (inner.total, inner.value.as_ref()),
        (None, Some(&messages[1]))
    );
    let neg = page(api, ask(db, "chat-tools", "messages[-1].id")).await;
    assert_eq!(neg.value, Some(json!(last)));

    // The paged detail: the first page, and what the whole holds.
    let paged = api
        .checkpoint_detail(CheckpointRequest {
            page: Some(2),
            ..req(db, "chat-tools", None, false)
        })
        .await
        .unwrap();
    assert_eq!(paged.values["messages"], json!(messages[..2]));
    let info = paged
        .pages
        .iter()
        .find(|p| p.channel == "messages")
        .expect("paged");
    assert_eq!((info.total, info.offset, info.limit), (n as u32, 0, 2));
    assert_eq!(
        paged.channels, whole.channels,
        "the channels' facts are the whole's"
    );
}

#[tokio::test]
async fn odd_paths_are_one_line_errors() {
    let f = opened_fixture().await;
    let (api, db) = (&f.api, &f.db);
    let fails = |path: &str, limit: Option<u32>, query: Option<&str>| {
        let r = StatePageRequest {
            limit,
            query: query.map(Into::into),
            ..ask(db, "chat-tools", path)
        };
        async move { api.state_page(r).await.expect_err("refused") }
    };
    let e = fails("messages[", None, None).await;
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(e.message.starts_with("bad path"), "{}", e.message);
    let e = fails("no_such", None, None).await;
    assert_eq!(e.code, ErrorCode::NotFound);
    assert!(
        e.message.contains("(channels: ") && e.message.contains("messages"),
        "{}",
        e.message
    );
    for odd in ["messages[9999]", "messages.key", "messages[0].no_field[3]"] {
        let e = fails(odd, None, None).await;
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                ErrorCode::NotFound,
                &*format!("nothing at {odd} in this checkpoint")
            )
        );
    }
    for (limit, query) in [(Some(0), None), (Some(1001), None), (None, Some("  "))] {
        let e = fails("messages", limit, query).await;
        assert_eq!(e.code, ErrorCode::InvalidInput, "{}", e.message);
        assert!(!e.message.contains('\n'));
    }
    let e = api
        .state_page(ask(db, "no-such-thread", "messages"))
        .await
        .expect_err("missing");
    assert_eq!(e.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn a_long_string_folds_to_its_path_and_a_scalar_is_a_value() {
    let f = opened_fixture().await;
    let (api, db) = (&f.api, &f.db);
    let folded = page(api, ask(db, "rich-types", "big_text")).await;
    assert_eq!((folded.total, folded.folded), (None, 1));
    let v = folded.value.unwrap();
    assert_eq!(v["$folded"]["path"], "big_text");
    assert_eq!(v["$type"], "builtins.str");
    let chars = v["$folded"]["chars"].as_u64().unwrap();
    let whole = page(
        api,
        StatePageRequest {
            fold: Some(0),
            ..ask(db, "rich-types", "big_text")
        },
    )
    .await;
    let text = whole.value.unwrap();
    assert_eq!(text.as_str().map(|s| s.chars().count() as u64), Some(chars));
    assert!(text
        .as_str()
        .unwrap()
        .starts_with(v["$value"].as_str().unwrap()));
    // A search on a value that is not a list finds no items (there are none).
    let q = StatePageRequest {
        query: Some("flashback".into()),
        ..ask(db, "rich-types", "big_text")
    };
    assert_eq!(page(api, q).await.hit_count, 0);
}

#[tokio::test]
async fn a_list_over_the_decode_budget_pages_within_the_requests_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path());
    let items = 600_000u32;
    bigvalue::splice(&path, "forked", "big", bigvalue::BigValue::Ints(items)).unwrap();
    bigvalue::splice(
        &path,
        "chat-tools",
        "blob",
        bigvalue::BigValue::Bytes(3 << 20),
    )
    .unwrap();
    let api = api_in(dir.path(), Initial::None);
    api.set_setting(SetSettingRequest {
        key: "max_value_mb".into(),
        value: Some("1".into()),
    })
    .await
    .unwrap();
    let db = open(&api, path.to_str().unwrap()).await;
    // As before without a page: the placeholder.
    let plain = api
        .checkpoint_detail(req(&db, "forked", None, false))
        .await
        .unwrap();
    assert!(plain.values["big"].get("$too_large").is_some());
    // Paged: the first page of the list, its length said.
    let paged = api
        .checkpoint_detail(CheckpointRequest {
            page: Some(50),
            ..req(&db, "forked", None, false)
        })
        .await
        .unwrap();
    let first = paged.values["big"].as_array().expect("a page");
    assert_eq!(first.len(), 50);
    assert_eq!(first[1], Json::from(0x1000_0001u32));
    let info = paged.pages.iter().find(|p| p.channel == "big").unwrap();
    assert_eq!(info.total, items);
    // Its last page, and a search over all 600,000 items.
    let r = StatePageRequest {
        offset: items - 10,
        limit: Some(20),
        query: Some(format!("{}", 0x1000_0000u32 + items - 3)),
        ..ask(&db, "forked", "big")
    };
    let last = page(&api, r).await;
    assert_eq!((last.total, last.items.len()), (Some(items), 10));
    assert_eq!(last.items[9], Json::from(0x1000_0000u32 + items - 1));
    assert_eq!(
        last.hits.iter().map(|h| h.index).collect::<Vec<_>>(),
        vec![items - 3]
    );
    // Paged from its stored bytes, it is what the whole list read on purpose holds.
    let full = api
        .checkpoint_detail(req(&db, "forked", None, true))
        .await
        .unwrap();
    let whole = full.values["big"].as_array().expect("the whole list");
    assert_eq!(whole.len(), items as usize);
    assert_eq!(first, &whole[..50]);
    assert_eq!(last.items, whole[whole.len() - 10..]);
    for (path, at) in [
        ("big[-1]", items as usize - 1),
        ("big[12345]", 12345),
        ("big[64]", 64),
    ] {
        let one = page(&api, ask(&db, "forked", path)).await;
        assert_eq!(one.value.as_ref(), Some(&whole[at]), "{path}");
    }
    let past = api.state_page(ask(&db, "forked", "big[600000]")).await;
    assert_eq!(past.expect_err("past the end").code, ErrorCode::NotFound);
    // A value over the per-value budget that is not a list: read within the request's budget
    // and folded, as before.
    let blob = page(&api, ask(&db, "chat-tools", "blob")).await;
    let v = blob.value.expect("the value");
    assert!(
        blob.folded >= 1 && v.to_string().len() < 100_000,
        "{}",
        &v.to_string()[..200.min(v.to_string().len())]
    );
}
