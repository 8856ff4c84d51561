//! `thread_topology` on the SQLite fixture: nested subgraphs, where runs ended, threads added
//! up, and the checkpoints a node ran at being the graph's rows that say so.

use crate::common;
use common::*;
use flashback_api::*;

fn req(db: &DbInfo, thread: &str, more: &[&str]) -> TopologyRequest {
    TopologyRequest {
        db: db.db.clone(),
        thread_id: thread.to_owned(),
        thread_ids: more.iter().map(|s| (*s).to_owned()).collect(),
    }
}

fn edges(g: &TopoGraph) -> Vec<String> {
    g.edges
        .iter()
        .map(|e| format!("{} → {} ×{}", e.from, e.to, e.count))
        .collect()
}

#[tokio::test]
async fn subgraphs_nest_and_runs_end() {
    let f = opened_fixture().await;
    let t = f
        .api
        .thread_topology(req(&f.db, "subgraph", &[]))
        .await
        .expect("topology");
    assert_eq!(t.thread_ids, ["subgraph"]);
    let paths: Vec<(&str, Option<&str>)> = t
        .graphs
        .iter()
        .map(|g| (g.path.as_str(), g.node.as_deref()))
        .collect();
    assert_eq!(
        paths,
        [
            ("", None),
            ("mid", Some("mid")),
            ("mid|inner", Some("inner"))
        ]
    );
    assert_eq!(
        edges(&t.graphs[0]),
        [
            "__start__ → prep ×1",
            "prep → mid ×1",
            "mid → post ×1",
            "post → __end__ ×1"
        ]
    );
    assert_eq!(
        edges(&t.graphs[2]),
        ["__start__ → inner_step ×1", "inner_step → __end__ ×1"]
    );
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);

    // Each checkpoint a node ran at is a row of the thread's graph whose step ran it.
    let g = f
        .api
        .thread_graph(GraphRequest {
            db: f.db.db.clone(),
            thread_id: "subgraph".into(),
            collapsed: Vec::new(),
        })
        .await
        .expect("graph");
    for graph in &t.graphs {
        for n in graph.nodes.iter().filter(|n| n.name != "__end__") {
            assert!(!n.checkpoints.is_empty(), "{} ran somewhere", n.name);
            for c in &n.checkpoints {
                let row = g
                    .rows
                    .iter()
                    .find(|r| r.ns == c.ns && r.id == c.id)
                    .expect("a row");
                assert!(row.ran.contains(&n.name), "{} made {}", n.name, c.id);
            }
        }
    }
}

#[tokio::test]
async fn threads_add_up_and_unknown_ones_are_not_found() {
    let f = opened_fixture().await;
    let one = f
        .api
        .thread_topology(req(&f.db, "chat-tools", &[]))
        .await
        .expect("topology");
    assert_eq!(
        edges(&one.graphs[0]),
        [
            "__start__ → agent ×2",
            "agent → tools ×2",
            "tools → agent ×2",
            "agent → __end__ ×2"
        ]
    );
    // The same thread named again counts once; another thread adds up.
    let two = f
        .api
        .thread_topology(req(
            &f.db,
            "chat-tools",
            &["chat-tools", "interrupt-resumed"],
        ))
        .await
        .expect("topology");
    assert_eq!(two.thread_ids, ["chat-tools", "interrupt-resumed"]);
    let root = &two.graphs[0];
    // Two turns of one, one run of the other.
    assert_eq!(root.calls, 3);
    let start = root
        .nodes
        .iter()
        .find(|n| n.name == "__start__")
        .expect("entry");
    assert_eq!(start.runs, 3);
    let threads: Vec<&str> = start
        .checkpoints
        .iter()
        .map(|c| c.thread_id.as_str())
        .collect();
    assert_eq!(threads, ["chat-tools", "chat-tools", "interrupt-resumed"]);

    let e = f
        .api
        .thread_topology(req(&f.db, "chat-tools", &["nope"]))
        .await
        .expect_err("not there");
    assert_eq!(e.code, ErrorCode::NotFound);
    let many: Vec<String> = (0..120).map(|i| format!("t{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let e = f
        .api
        .thread_topology(req(&f.db, "chat-tools", &many))
        .await
        .expect_err("too many");
    assert_eq!(e.code, ErrorCode::InvalidInput);
}
