//! The MCP door in process: an rmcp client talks to the server over an in-memory pipe, on the
//! LangGraph fixture; answers are compared with `Api::dispatch`'s JSON for the same request
//! (what `flashback … --json` prints, `tests/it/doors.rs`).

use super::{Door, Handler, McpOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, ReadResourceRequestParams,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::ServiceExt;
use serde_json::{json, Map, Value as Json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite")
}

type Client = RunningService<RoleClient, ()>;

async fn connect(db: &Path, allow_writes: bool, allow_run: bool) -> (Client, Arc<Door>) {
    let opts = McpOptions {
        db: db.display().to_string(),
        http: None,
        allow_writes,
        allow_run,
    };
    let door = Arc::new(Door::open(&opts).await.expect("open the fixture"));
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let handler = Handler(Arc::clone(&door));
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.expect("initialize");
    (client, door)
}

async fn call(client: &Client, name: &str, args: Json) -> CallToolResult {
    let args: Map<String, Json> = args.as_object().cloned().unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .expect("a tool result, never a protocol error")
}

fn result(r: &CallToolResult) -> Json {
    assert_eq!(r.is_error, Some(false), "{r:?}");
    r.structured_content.clone().unwrap_or_default()["result"].clone()
}

fn text(r: &CallToolResult) -> String {
    r.content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

async fn dispatch(door: &Door, command: &str, mut req: Json) -> Json {
    req["db"] = json!(door.db);
    door.api
        .dispatch(command, &json!({ "req": req }))
        .await
        .expect("dispatch")
}

#[tokio::test]
async fn reads_are_listed_and_writes_only_with_the_flags() {
    let db = fixture();
    let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools.into_iter().map(|t| t.name.to_string()).collect()
    };
    let (c, _) = connect(&db, false, false).await;
    let tools = names(c.list_all_tools().await.expect("tools"));
    for read in [
        "threads",
        "history",
        "state",
        "graph",
        "diff",
        "replay",
        "watch",
        "search",
        "activity",
        "storage",
        "store_ls",
        "store_get",
        "store_search",
    ] {
        assert!(
            tools.contains(&read.to_owned()),
            "{read} missing: {tools:?}"
        );
    }
    for write in [
        "fork",
        "merge",
        "delete_branch",
        "rerun",
        "prune",
        "store_put",
    ] {
        assert!(
            !tools.contains(&write.to_owned()),
            "{write} offered without --allow-writes"
        );
    }
    let refused = call(&c, "fork", json!({"thread_id": "x", "checkpoint_id": "y"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("--allow-writes"),
        "{}",
        text(&refused)
    );

    let (c, _) = connect(&db, true, false).await;
    let tools = names(c.list_all_tools().await.expect("tools"));
    assert!(tools.contains(&"fork".to_owned()) && !tools.contains(&"rerun".to_owned()));
    let (c, _) = connect(&db, true, true).await;
    let tools = names(c.list_all_tools().await.expect("tools"));
    assert!(tools.contains(&"rerun".to_owned()));
}

#[tokio::test]
async fn answers_equal_the_json_of_every_other_door() {
    let (c, door) = connect(&fixture(), false, false).await;
    let threads = call(&c, "threads", json!({})).await;
    let listed = result(&threads);
    let first = listed[0]["thread_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!first.is_empty(), "{listed}");
    assert!(text(&threads).contains(&first), "{}", text(&threads));

    let history = result(&call(&c, "history", json!({"thread_id": first})).await);
    assert_eq!(
        history,
        dispatch(
            &door,
            "thread_history",
            json!({"thread_id": first, "checkpoint_ns": ""})
        )
        .await
    );

    let graph = result(&call(&c, "graph", json!({"thread_id": first})).await);
    assert_eq!(
        graph,
        dispatch(&door, "thread_graph", json!({"thread_id": first})).await
    );

    let state = result(&call(&c, "state", json!({"thread_id": first})).await);
    assert_eq!(
        state,
        dispatch(&door, "checkpoint_detail", json!({"thread_id": first})).await
    );

    let channel = state["values"]
        .as_object()
        .and_then(|v| v.keys().next().cloned())
        .unwrap_or_default();
    let one = result(&call(&c, "state", json!({"thread_id": first, "path": channel})).await);
    assert_eq!(one["value"], state["values"][&channel]);

    let ids: Vec<String> = history
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h["checkpoint_id"].as_str().map(str::to_owned))
        .collect();
    if ids.len() >= 2 {
        let (a, b) = (&ids[ids.len() - 1], &ids[0]);
        let sides =
            json!({"thread_id": first, "a": {"checkpoint_id": a}, "b": {"checkpoint_id": b}});
        let diff = result(&call(&c, "diff", sides.clone()).await);
        assert_eq!(diff, dispatch(&door, "diff_checkpoints", sides).await);
        // The short ids the CLI's tables print name the same checkpoints.
        let short = |id: &str| crate::human::short_id(id);
        let shorts = json!({"thread_id": first, "a": {"checkpoint_id": short(a)}, "b": {"checkpoint_id": short(b)}});
        assert_eq!(result(&call(&c, "diff", shorts).await), diff);
        let old = result(
            &call(
                &c,
                "state",
                json!({"thread_id": first, "checkpoint_id": short(a)}),
            )
            .await,
        );
        assert_eq!(old["checkpoint_id"], json!(a));
    }
}

#[tokio::test]
async fn bad_arguments_are_tool_errors_with_one_line() {
    let (c, _) = connect(&fixture(), false, false).await;
    for (tool, args, says) in [
        ("state", json!({}), "thread_id"),
        (
            "state",
            json!({"thread_id": "no-such-thread"}),
            "no-such-thread",
        ),
        (
            "state",
            json!({"thread_id": "x", "path": "messages[["}),
            "bad path",
        ),
        (
            "history",
            json!({"thread_id": "x", "limt": 3}),
            "unknown argument \"limt\"",
        ),
        ("threads", json!({"max_tokens": 3}), "max_tokens"),
        ("nope", json!({}), "no tool \"nope\""),
    ] {
        let r = call(&c, tool, args).await;
        assert_eq!(r.is_error, Some(true), "{tool}: {r:?}");
        let t = text(&r);
        assert!(t.contains(says), "{tool}: {t}");
        assert_eq!(t.trim().lines().count(), 1, "{tool}: {t}");
    }
}

#[tokio::test]
async fn lists_are_paged_with_a_cursor() {
    let (c, _) = connect(&fixture(), false, false).await;
    let all = result(&call(&c, "threads", json!({})).await);
    let n = all.as_array().map_or(0, Vec::len);
    assert!(n >= 2, "the fixture has several threads");
    let rest = call(&c, "threads", json!({"cursor": "1"})).await;
    assert_eq!(result(&rest).as_array().map(Vec::len), Some(n - 1));
    assert_eq!(result(&rest)[0], all[1]);
    // `graph` has no `limit` of its own: the door's `limit` is the page size of its rows.
    let graph = result(
        &call(
            &c,
            "graph",
            json!({"thread_id": "long", "max_tokens": 100_000}),
        )
        .await,
    );
    let rows = graph["rows"].as_array().map_or(0, Vec::len);
    assert_eq!(rows, 300, "the whole graph fits in 100k tokens");
    // By default, only what fits in ~8k tokens, and where to go on.
    let first = call(&c, "graph", json!({"thread_id": "long"})).await;
    let s = first.structured_content.clone().unwrap_or_default();
    let shown = s["page"]["count"].as_u64().unwrap_or(0);
    assert!(shown > 2 && shown < 300, "{shown}");
    assert_eq!(s["page"]["next_cursor"], json!(shown.to_string()));
    let page = call(&c, "graph", json!({"thread_id": "long", "limit": 2})).await;
    let s = page.structured_content.clone().unwrap_or_default();
    assert_eq!(s["page"]["total"], json!(rows));
    assert_eq!(s["page"]["next_cursor"], json!("2"));
    assert!(
        s["more"]
            .as_str()
            .is_some_and(|m| m.contains("cursor=\"2\"")),
        "{s}"
    );
    assert_eq!(
        s["result"]["rows"],
        json!(graph["rows"].as_array().map(|r| r[..2].to_vec()))
    );
    let next = call(
        &c,
        "graph",
        json!({"thread_id": "long", "limit": 2, "cursor": "2"}),
    )
    .await;
    assert_eq!(result(&next)["rows"][0], graph["rows"][2]);
}

#[tokio::test]
async fn a_huge_value_is_folded_within_the_budget() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("big.sqlite");
    std::fs::copy(fixture(), &db).expect("copy");
    let (c0, _) = connect(&db, false, false).await;
    let thread = result(&call(&c0, "threads", json!({})).await)[0]["thread_id"].clone();
    let thread = thread.as_str().unwrap_or_default().to_owned();
    flashback_testkit::bigvalue::splice(
        &db,
        &thread,
        "big",
        flashback_testkit::bigvalue::BigValue::Ints(4_000_000),
    )
    .expect("splice");
    let (c, _) = connect(&db, false, false).await;
    for args in [
        json!({"thread_id": thread, "full": true}),
        json!({"thread_id": thread, "full": true, "path": "big"}),
        json!({"thread_id": thread}),
    ] {
        let r = call(&c, "state", args.clone()).await;
        let s = r.structured_content.clone().unwrap_or_default();
        let size = serde_json::to_string(&s).map_or(usize::MAX, |t| t.len()) + text(&r).len();
        assert!(size <= 8_000 * 4, "{args}: {size} characters");
        assert_eq!(r.is_error, Some(false), "{args}");
    }
    // At a path, the huge list answers a page (its first 1,000 items) and says its length.
    let paged = call(&c, "state", json!({"thread_id": thread, "path": "big"})).await;
    let s = paged.structured_content.clone().unwrap_or_default();
    assert_eq!(s["result"]["total"], 4_000_000, "{s}");
    assert_eq!(s["result"]["value"].as_array().map(Vec::len), Some(1000));
    // The text of a value is its JSON, folded to the text's share, never cut mid-value.
    let first = text(&paged).lines().next().unwrap_or_default().to_owned();
    assert!(serde_json::from_str::<Json>(&first).is_ok(), "{first}");
    // The whole state, opened in full: folded to fit.
    let folded = call(&c, "state", json!({"thread_id": thread, "full": true})).await;
    let s = folded.structured_content.clone().unwrap_or_default();
    assert!(s["folded"].as_u64().unwrap_or(0) > 0, "{s}");
    assert!(text(&folded).contains("note: "), "{}", text(&folded));
    assert!(s.to_string().contains("4000000 in all"), "{s}");
}

#[tokio::test]
async fn writes_default_to_a_dry_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("w.sqlite");
    std::fs::copy(fixture(), &db).expect("copy");
    let (c, door) = connect(&db, true, false).await;
    let thread = result(&call(&c, "threads", json!({})).await)[0]["thread_id"].clone();
    let history = result(&call(&c, "history", json!({"thread_id": thread})).await);
    let head = history[0]["checkpoint_id"].clone();
    let dry = call(
        &c,
        "fork",
        json!({"thread_id": thread, "checkpoint_id": head}),
    )
    .await;
    assert_eq!(result(&dry)["dry_run"], json!(true), "{dry:?}");
    assert!(text(&dry).contains("dry run"), "{}", text(&dry));
    let after = dispatch(
        &door,
        "thread_history",
        json!({"thread_id": thread, "checkpoint_ns": ""}),
    )
    .await;
    assert_eq!(after, history, "a dry run wrote nothing");
    let real = call(
        &c,
        "fork",
        json!({"thread_id": thread, "checkpoint_id": head, "dry_run": false}),
    )
    .await;
    let fork = result(&real);
    assert_eq!(fork["parent_checkpoint_id"], head);
    let after = dispatch(
        &door,
        "thread_history",
        json!({"thread_id": thread, "checkpoint_ns": ""}),
    )
    .await;
    assert_eq!(after[0]["checkpoint_id"], fork["checkpoint_id"]);
    // A copy onto a thread that exists is refused already in the dry run.
    let copy = call(
        &c,
        "copy",
        json!({"thread_id": thread, "target_thread_id": thread}),
    )
    .await;
    assert_eq!(copy.is_error, Some(true), "{copy:?}");
    assert!(text(&copy).contains("already exists"), "{}", text(&copy));
    // The writes with a dry run of their own pass it on: nothing is deleted.
    let preview = call(&c, "delete", json!({"thread_id": thread})).await;
    assert_eq!(result(&preview)["dry_run"], json!(true));
    let still = dispatch(
        &door,
        "thread_history",
        json!({"thread_id": thread, "checkpoint_ns": ""}),
    )
    .await;
    assert_eq!(still, after);
}

#[tokio::test]
async fn resources_and_the_prompt() {
    let (c, _) = connect(&fixture(), false, false).await;
    let listed = c.list_all_resources().await.expect("resources");
    let thread = listed
        .iter()
        .find(|r| !r.uri.contains("/checkpoint/"))
        .expect("a thread");
    let checkpoint = listed
        .iter()
        .find(|r| r.uri.contains("/checkpoint/"))
        .expect("a checkpoint");
    for uri in [&thread.uri, &checkpoint.uri] {
        let read = c
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .expect("read");
        assert_eq!(read.contents.len(), 1, "{uri}");
    }
    let missing = c
        .read_resource(ReadResourceRequestParams::new(
            "flashback://thread/no-such-thread",
        ))
        .await;
    assert!(missing.is_err());
    let id = thread
        .uri
        .trim_start_matches(super::resources::PREFIX)
        .to_owned();
    let mut args = Map::new();
    args.insert("thread_id".into(), json!(id));
    let prompt = c
        .get_prompt(GetPromptRequestParams::new(super::resources::PROMPT).with_arguments(args))
        .await
        .expect("prompt");
    assert_eq!(prompt.messages.len(), 1);
}

#[tokio::test]
async fn threads_are_found_by_metadata_time_and_status() {
    let db = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/filters.sqlite");
    let (c, door) = connect(&db, false, false).await;
    let tools = c.list_all_tools().await.expect("tools");
    let threads = tools.iter().find(|t| t.name == "threads").expect("threads");
    let props = threads
        .input_schema
        .get("properties")
        .cloned()
        .unwrap_or_default();
    for field in ["filter", "since", "until", "status", "after"] {
        assert!(props.get(field).is_some(), "threads takes {field}: {props}");
    }
    let says = threads.description.as_deref().unwrap_or_default();
    assert!(
        says.contains("filter") && says.contains("user_id"),
        "{says}"
    );
    let req = json!({"filter": {"user_id": "u-48213"}, "status": ["finished"]});
    let found = result(&call(&c, "threads", req.clone()).await);
    let ids: Vec<&str> = found
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["thread_id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(ids, ["handover", "support-1"]);
    assert_eq!(found, dispatch(&door, "list_threads", req).await);
    let next = json!({"filter": {"user_id": "u-48213"}, "after": found[0]["cursor"]});
    let rest = result(&call(&c, "threads", next).await);
    assert_eq!(rest[0]["thread_id"], "support-2");
    let bad = call(&c, "threads", json!({"since": "yesterday"})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("is not a time"), "{}", text(&bad));
}

#[tokio::test]
async fn state_at_a_path_pages_a_long_list() {
    let (c, door) = connect(&fixture(), false, false).await;
    let whole = dispatch(
        &door,
        "checkpoint_detail",
        json!({"thread_id": "chat-tools"}),
    )
    .await;
    let messages = whole["values"]["messages"].as_array().cloned().unwrap();
    let n = messages.len();
    // The whole list (it fits a page): exactly as before, no paging fields.
    let all = result(
        &call(
            &c,
            "state",
            json!({"thread_id": "chat-tools", "path": "messages"}),
        )
        .await,
    );
    assert_eq!(all["value"], json!(messages));
    assert!(all.get("total").is_none());
    // A page of it: `cursor` its first index, `limit` its length, the list's length said.
    let args = json!({"thread_id": "chat-tools", "path": "messages", "cursor": "1", "limit": 2});
    let page = result(&call(&c, "state", args).await);
    assert_eq!(page["value"], json!(messages[1..3]));
    assert_eq!(
        (page["total"].clone(), page["offset"].clone()),
        (json!(n), json!(1))
    );
    // One item, and a value inside it.
    let one = result(
        &call(
            &c,
            "state",
            json!({"thread_id": "chat-tools", "path": "messages[-1]"}),
        )
        .await,
    );
    assert_eq!(one["value"], messages[n - 1]);
    let bad = call(
        &c,
        "state",
        json!({"thread_id": "chat-tools", "path": "messages[999]"}),
    )
    .await;
    assert_eq!(bad.is_error, Some(true));
    assert!(
        text(&bad).contains("nothing at messages[999]"),
        "{}",
        text(&bad)
    );
}

#[tokio::test]
async fn the_index_advice_is_a_read_and_creating_a_write_with_a_dry_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("i.sqlite");
    std::fs::copy(fixture(), &db).expect("copy");
    let (c, door) = connect(&db, false, false).await;
    let advice = result(&call(&c, "index", json!({})).await);
    assert_eq!(advice, dispatch(&door, "index_advice", json!({})).await);
    assert_eq!(advice["applicable"], json!(true));
    let refused = call(
        &c,
        "index_apply",
        json!({"action": "create", "names": ["all"]}),
    )
    .await;
    assert_eq!(
        refused.is_error,
        Some(true),
        "offered without --allow-writes"
    );

    let (c, door) = connect(&db, true, false).await;
    let dry = call(
        &c,
        "index_apply",
        json!({"action": "create", "names": ["all"]}),
    )
    .await;
    assert_eq!(result(&dry)["dry_run"], json!(true), "{dry:?}");
    assert!(text(&dry).contains("dry run"), "{}", text(&dry));
    let still = dispatch(&door, "index_advice", json!({})).await;
    assert!(still["indexes"]
        .as_array()
        .expect("indexes")
        .iter()
        .all(|i| i["state"] == "missing"));
    let made = call(
        &c,
        "index_apply",
        json!({"action": "create", "names": ["all"], "dry_run": false}),
    )
    .await;
    let made = result(&made);
    assert!(made["advice"]["indexes"]
        .as_array()
        .expect("indexes")
        .iter()
        .all(|i| i["state"] == "present"));
    let dropped = call(
        &c,
        "index_apply",
        json!({"action": "drop", "names": ["all"], "dry_run": false}),
    )
    .await;
    assert_eq!(result(&dropped)["dry_run"], json!(false));
}
