//! LangGraph.js databases (issue 16), read side: the fixtures written by the real JS library
//! (`tests/js-fixtures`) compared checkpoint by checkpoint with JS's `getStateHistory`, and
//! the typed view of their messages, interrupts, Sends and subgraphs.

use crate::common;
use common::js::*;
use common::*;
use flashback_api::*;
use serde_json::{json, Value as Json};

#[tokio::test]
async fn sqlite_history_matches_js_checkpoint_by_checkpoint() {
    let JsSqlite {
        dir: _dir,
        path,
        api,
        db,
    } = js_sqlite().await;
    let before = fingerprint(&path);
    let c = compare_with_js(&api, &db, &expected("sqlite")).await;
    assert_same(&c, "sqlite");
    assert_eq!(c.checkpoints, 38, "every checkpoint of every namespace");
    assert_eq!(
        c.interrupts, 2,
        "the waiting and the resumed thread's interrupts"
    );
    // SQLite stores the Annotations' defaults inline: nothing is left to the default rule.
    assert_eq!(c.defaults, 0);
    assert_eq!(fingerprint(&path), before, "reading never writes");
}

#[tokio::test]
async fn postgres_history_matches_js_checkpoint_by_checkpoint() {
    let Some(JsPostgres {
        pg: _pg,
        dir: _dir,
        api,
        db,
    }) = js_postgres().await
    else {
        return;
    };
    let c = compare_with_js(&api, &db, &expected("postgres")).await;
    assert_same(&c, "postgres");
    assert_eq!(c.checkpoints, 36, "every checkpoint of every namespace");
    assert_eq!(c.interrupts, 2);
    assert!(c.defaults > 0, "JS shows defaults no blob holds yet");
    // The JS PostgresSaver's fork bug, shown as JS shows it: the update checkpoint's `log`
    // is the original branch's version 4 (no "edited"), and nothing is due.
    let forked = ns_history(&api, &db, "forked", "").await;
    assert_eq!(forked.len(), 6);
    let update = forked
        .iter()
        .find(|h| h.source.as_deref() == Some("update"))
        .expect("the updateState checkpoint");
    let d = detail(&api, &db, "forked", "", &update.checkpoint_id).await;
    assert_eq!(
        d.values["log"],
        serde_json::json!(["start", "step1", "step2 (note=none)"])
    );
    assert_eq!(d.values["note"], "forked");
    assert!(d.tasks.next.is_empty(), "{:?}", d.tasks.next);
}

#[tokio::test]
async fn sqlite_values_are_typed_like_python_ones() {
    let JsSqlite {
        dir: _dir, api, db, ..
    } = js_sqlite().await;
    typed_views(&api, &db).await;
}

#[tokio::test]
async fn postgres_values_are_typed_like_python_ones() {
    let Some(JsPostgres {
        pg: _pg,
        dir: _dir,
        api,
        db,
    }) = js_postgres().await
    else {
        return;
    };
    assert_eq!(db.kind, DbKind::Postgres);
    typed_views(&api, &db).await;
}

/// The DAG rows name the nodes that ran, as for Python (JS stores no task path: the names
/// come from the writes' task ids), and mark the step waiting at an interrupt.
async fn ran_names(api: &Api, db: &DbInfo) {
    let g = graph(api, db, "chat-tools").await;
    let ran: Vec<(Option<i64>, Vec<String>)> = g
        .rows
        .iter()
        .filter(|r| r.source.as_deref() == Some("loop"))
        .map(|r| (r.step, r.ran.clone()))
        .collect();
    let named = |step: i64| {
        ran.iter()
            .find(|(s, _)| *s == Some(step))
            .map(|(_, r)| r.clone())
    };
    assert_eq!(named(0), Some(vec!["__start__".to_owned()]), "{ran:?}");
    assert_eq!(named(1), Some(vec!["agent".to_owned()]), "{ran:?}");
    assert_eq!(named(2), Some(vec!["tools".to_owned()]), "{ran:?}");
    assert_eq!(named(3), Some(vec!["agent".to_owned()]), "{ran:?}");
    let g = graph(api, db, "interrupt-waiting").await;
    let head = g
        .rows
        .iter()
        .find(|r| r.ns.is_empty() && r.parent_id.is_some() && r.step == Some(1));
    let head = head.expect("the step-1 checkpoint");
    assert_eq!(head.ran, ["prepare"], "{:?}", head);
    assert_eq!(
        head.marks,
        [flashback_engine::StepMark::Interrupted],
        "{:?}",
        head
    );
}

#[tokio::test]
async fn sqlite_graph_rows_name_the_nodes_that_ran() {
    let JsSqlite {
        dir: _dir, api, db, ..
    } = js_sqlite().await;
    ran_names(&api, &db).await;
}

#[tokio::test]
async fn postgres_graph_rows_name_the_nodes_that_ran() {
    let Some(JsPostgres {
        pg: _pg,
        dir: _dir,
        api,
        db,
    }) = js_postgres().await
    else {
        return;
    };
    ran_names(&api, &db).await;
}

fn keys(v: &Json) -> Vec<&str> {
    v.as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

/// What both backends must show: messages, interrupts, Sends and the subgraph, typed.
async fn typed_views(api: &Api, db: &DbInfo) {
    let list = threads(api, db).await;
    let by = |id: &str| list.iter().find(|t| t.thread_id == id).expect(id);

    // chat-tools: messages with Python's types and model_dump fields.
    let chat = by("chat-tools");
    assert_eq!(chat.status, Some(ThreadStatus::Finished));
    let head = chat.latest_checkpoint_id.clone().expect("a head");
    let d = detail(api, db, "chat-tools", "", &head).await;
    let messages = d.values["messages"].as_array().expect("a list");
    let types: Vec<&str> = messages
        .iter()
        .map(|m| m["$type"].as_str().expect("typed"))
        .collect();
    assert_eq!(
        types,
        [
            "langchain_core.messages.human.HumanMessage",
            "langchain_core.messages.ai.AIMessage",
            "langchain_core.messages.tool.ToolMessage",
            "langchain_core.messages.tool.ToolMessage",
            "langchain_core.messages.ai.AIMessage",
            "langchain_core.messages.human.HumanMessage",
            "langchain_core.messages.ai.AIMessage",
        ]
    );
    let ids: Vec<&str> = messages
        .iter()
        .map(|m| m["id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        ids,
        [
            "human-1",
            "ai-1",
            "tool-call_add",
            "tool-call_mul",
            "ai-2",
            "human-2",
            "ai-3"
        ]
    );
    let kinds: Vec<&str> = messages
        .iter()
        .map(|m| m["type"].as_str().expect("type"))
        .collect();
    assert_eq!(kinds, ["human", "ai", "tool", "tool", "ai", "human", "ai"]);
    assert_eq!(messages[0]["content"], "What is 2 + 3 and 4 * 5?");
    let ai = &messages[1];
    assert_eq!(
        keys(ai),
        [
            "$type",
            "content",
            "additional_kwargs",
            "response_metadata",
            "type",
            "name",
            "id",
            "tool_calls",
            "invalid_tool_calls",
            "usage_metadata"
        ],
        "Python's model_dump fields, in its order: {ai}"
    );
    assert_eq!(ai["name"], Json::Null);
    assert_eq!(ai["usage_metadata"], Json::Null);
    assert_eq!(
        ai["tool_calls"],
        json!([
            {"name": "add", "args": {"a": 2, "b": 3}, "id": "call_add", "type": "tool_call"},
            {"name": "multiply", "args": {"a": 4, "b": 5}, "id": "call_mul", "type": "tool_call"}
        ])
    );
    let tool = &messages[2];
    assert_eq!(tool["tool_call_id"], "call_add");
    assert_eq!(tool["name"], "add");
    assert_eq!(tool["content"], "5");
    assert_eq!(tool["status"], "success");
    assert_eq!(tool["artifact"], Json::Null);
    let last_ai = &messages[4];
    assert_eq!(
        last_ai["usage_metadata"],
        json!({"input_tokens": 42, "output_tokens": 12, "total_tokens": 54})
    );
    assert_eq!(
        last_ai["response_metadata"],
        json!({"model_name": "scripted", "finish_reason": "stop"})
    );
    assert_eq!(last_ai["tool_calls"], json!([]));
    let info = d
        .channels
        .iter()
        .find(|c| c.channel == "messages")
        .expect("messages channel");
    assert_eq!(info.type_name, "list");
    assert!(info.size > 0 && info.error.is_none(), "{info:?}");
    // The writes are typed too: the tools' ToolMessages, attributed to their node.
    let g = graph(api, db, "chat-tools").await;
    let mut tool_writes = 0;
    for row in &g.rows {
        let d = detail(api, db, "chat-tools", "", &row.id).await;
        for group in &d.writes {
            for w in group.writes.iter().filter(|w| w.channel == "messages") {
                assert_eq!(w.type_tag, "json");
                assert!(
                    w.value.to_string().contains("langchain_core.messages."),
                    "{}",
                    w.value
                );
                if w.value.to_string().contains("ToolMessage") {
                    assert_eq!(group.node.as_deref(), Some("tools"), "{group:?}");
                    tool_writes += 1;
                }
            }
        }
    }
    assert!(tool_writes > 0, "the tools node's writes are shown");

    // interrupt-waiting: interrupted (not pending), with the question.
    let waiting = by("interrupt-waiting");
    assert_eq!(waiting.status, Some(ThreadStatus::Interrupted));
    assert_eq!(waiting.next, ["review"]);
    let question = json!({"question": "Approve this draft?", "draft": "Quarterly report v1"});
    assert_eq!(waiting.interrupts.len(), 1, "{:?}", waiting.interrupts);
    assert_eq!(waiting.interrupts[0]["$type"], "langgraph.types.Interrupt");
    assert_eq!(waiting.interrupts[0]["value"], question);
    let d = detail(
        api,
        db,
        "interrupt-waiting",
        "",
        waiting.latest_checkpoint_id.as_deref().expect("head"),
    )
    .await;
    let review = d
        .tasks
        .tasks
        .iter()
        .find(|t| t.name == "review")
        .expect("the review task");
    assert_eq!(review.interrupts.len(), 1);
    assert_eq!(review.interrupts[0]["value"], question);
    assert_eq!(review.status, TaskStatus::Interrupted);
    assert!(d
        .writes
        .iter()
        .flat_map(|g| &g.writes)
        .any(|w| w.kind == WriteKind::Interrupt && w.idx == -3));
    assert_eq!(
        d.values["due"], "2025-01-02T03:04:05.678Z",
        "a JS Date is a string"
    );
    assert_eq!(by("interrupt-resumed").status, Some(ThreadStatus::Finished));

    // send-fanout: 3 Sends, 3 PUSH tasks for `work` with their args.
    let h = ns_history(api, db, "send-fanout", "").await;
    let sends = h.iter().find(|e| e.step == Some(1)).expect("step 1");
    let d = detail(api, db, "send-fanout", "", &sends.checkpoint_id).await;
    let push: Vec<&flashback_engine::Task> = d
        .tasks
        .tasks
        .iter()
        .filter(|t| t.kind == flashback_engine::TaskKind::Push)
        .collect();
    assert_eq!(push.len(), 3, "{:?}", d.tasks.tasks);
    for (i, (t, item)) in push.iter().zip(["alpha", "beta", "gamma"]).enumerate() {
        assert_eq!(t.name, "work");
        assert_eq!(t.path, json!(["__pregel_push", i, false]));
        assert_eq!(t.send_arg, Some(json!({"item": item, "index": i})));
        assert!(t.finished, "each Send ran: {t:?}");
    }
    assert_eq!(d.tasks.next, ["work", "work", "work"]);
    let plan = h.iter().find(|e| e.step == Some(0)).expect("step 0");
    let d = detail(api, db, "send-fanout", "", &plan.checkpoint_id).await;
    let packets: Vec<&WriteEntry> = d
        .writes
        .iter()
        .flat_map(|g| &g.writes)
        .filter(|w| w.channel == "__pregel_tasks")
        .collect();
    assert_eq!(packets.len(), 3);
    assert!(packets.iter().all(|w| w.kind == WriteKind::Send
        && w.value["$type"] == "langgraph.types.Send"
        && w.value.to_string().contains("work")));

    // subgraph: the namespace is listed and readable.
    let sub = by("subgraph");
    let ns = sub
        .namespaces
        .iter()
        .find(|n| n.starts_with("research_team:"))
        .expect("the subgraph namespace")
        .clone();
    assert_eq!(sub.namespaces.len(), 2);
    let g = graph(api, db, "subgraph").await;
    assert_eq!(g.namespaces.len(), 1);
    assert_eq!(
        (g.namespaces[0].ns.as_str(), g.namespaces[0].count),
        (ns.as_str(), 4)
    );
    let inner = ns_history(api, db, "subgraph", &ns).await;
    assert_eq!(inner.len(), 4);
    let d = detail(api, db, "subgraph", &ns, &inner[0].checkpoint_id).await;
    assert_eq!(
        d.values["findings"],
        json!(["fact about otters", "checked 1 finding(s)"])
    );
    let parent = inner[0].metadata["parents"][""]
        .as_str()
        .expect("a parent")
        .to_owned();
    let d = detail(api, db, "subgraph", "", &parent).await;
    let team = d
        .tasks
        .tasks
        .iter()
        .find(|t| t.name == "research_team")
        .expect("the subgraph task");
    assert_eq!(team.state.as_deref(), Some(ns.as_str()));
    assert_eq!(d.subgraphs, [ns]);
}
