use super::*;
use StepMark::*;

/// A row as `annotate` leaves it: only what the topology reads is set.
fn row(ns: &str, id: &str, parent: Option<&str>, source: &str, ran: &[&str]) -> GraphRow {
    GraphRow {
        id: id.into(),
        ns: ns.into(),
        parent_id: parent.map(Into::into),
        lane: 0,
        depth: 0,
        branch: 0,
        fork_point: false,
        head: false,
        ns_head: false,
        parent_row: None,
        parent_lane: None,
        parent_kind: None,
        orphan_parent: None,
        broken_parent: None,
        step: id
            .trim_start_matches(|c: char| c.is_alphabetic())
            .parse()
            .ok(),
        source: Some(source.into()),
        ts: String::new(),
        subgraphs: Vec::new(),
        flashback_action: None,
        branch_key: String::new(),
        branch_label: None,
        merged_from_row: None,
        ran: ran.iter().map(|s| s.to_string()).collect(),
        marks: Vec::new(),
        mark_nodes: Vec::new(),
        models: Vec::new(),
        tokens: None,
    }
}

fn marked(mut r: GraphRow, marks: &[StepMark], nodes: &[&str]) -> GraphRow {
    r.marks = marks.to_vec();
    r.mark_nodes = nodes.iter().map(|s| s.to_string()).collect();
    r
}

/// Rows newest first, as the layout gives them.
fn newest_first(mut rows: Vec<GraphRow>) -> Vec<GraphRow> {
    rows.reverse();
    rows
}

fn ended(keys: &[(&str, &str)]) -> HashSet<(String, String)> {
    keys.iter()
        .map(|(n, i)| (n.to_string(), i.to_string()))
        .collect()
}

/// `from → to ×n` for each edge of a graph.
fn edges(g: &TopoGraph) -> Vec<String> {
    g.edges
        .iter()
        .map(|e| format!("{} → {} ×{}", e.from, e.to, e.count))
        .collect()
}

fn node<'a>(g: &'a TopoGraph, name: &str) -> &'a TopoNode {
    g.nodes.iter().find(|n| n.name == name).expect("node")
}

/// A `create_agent` run: model, two tool calls sent to `tools`, model again, done.
fn agent_run(ns: &str, first: i64, input_parent: Option<&str>) -> Vec<GraphRow> {
    let id = |k: i64| format!("c{}", first + k);
    let ids: Vec<String> = (0..5).map(id).collect();
    vec![
        row(ns, &ids[0], input_parent, "input", &[]),
        row(ns, &ids[1], Some(&ids[0]), "loop", &["__start__"]),
        row(ns, &ids[2], Some(&ids[1]), "loop", &["model"]),
        row(ns, &ids[3], Some(&ids[2]), "loop", &["tools", "tools"]),
        row(ns, &ids[4], Some(&ids[3]), "loop", &["model"]),
    ]
}

#[test]
fn an_agent_loop_with_its_entry_and_end() {
    let rows = newest_first(agent_run("", 0, None));
    assert_eq!(end_candidates(&rows), [(String::new(), "c4".to_owned())]);
    let t = topology("t", &rows, &ended(&[("", "c4")]));
    assert_eq!(t.graphs.len(), 1);
    let g = &t.graphs[0];
    assert_eq!((g.path.as_str(), g.calls, g.parent.clone()), ("", 1, None));
    let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["__start__", "model", "tools", "__end__"]);
    assert_eq!(
        edges(g),
        [
            "__start__ → model ×1",
            "model → tools ×1",
            "tools → model ×1",
            "model → __end__ ×1"
        ]
    );
    // Two `Send`s to `tools` are two runs, at one checkpoint.
    assert_eq!(node(g, "tools").runs, 2);
    assert_eq!(node(g, "tools").checkpoints.len(), 1);
    let model: Vec<(&str, Option<i64>)> = node(g, "model")
        .checkpoints
        .iter()
        .map(|c| (c.id.as_str(), c.step))
        .collect();
    assert_eq!(model, [("c2", Some(2)), ("c4", Some(4))]);
    assert_eq!(node(g, "__end__").checkpoints[0].id, "c4");
    // Not said to have ended: no `__end__`.
    let open = topology("t", &rows, &HashSet::new());
    assert!(open.graphs[0].nodes.iter().all(|n| n.name != "__end__"));
}

#[test]
fn turns_of_a_chat_add_up_and_new_input_links_nothing() {
    let mut rows = agent_run("", 0, None);
    rows.extend(agent_run("", 5, Some("c4")));
    let rows = newest_first(rows);
    // The last step of each turn may have ended it.
    assert_eq!(
        end_candidates(&rows),
        [
            (String::new(), "c9".to_owned()),
            (String::new(), "c4".to_owned())
        ]
    );
    let t = topology("t", &rows, &ended(&[("", "c4"), ("", "c9")]));
    let g = &t.graphs[0];
    assert_eq!(
        edges(g),
        [
            "__start__ → model ×2",
            "model → tools ×2",
            "tools → model ×2",
            "model → __end__ ×2"
        ]
    );
    assert_eq!(node(g, "model").runs, 4);
    assert_eq!(node(g, "__start__").runs, 2);
    // One thread, invoked twice.
    assert_eq!(g.calls, 2);
}

#[test]
fn sub_agents_nest_under_the_node_that_ran_them() {
    let mut rows = agent_run("", 0, None);
    // The root's `tools` ran a sub-agent twice (a deep agent's `task` tool), and the second
    // sub-agent ran one of its own.
    rows.extend(agent_run("tools:a1", 10, None));
    rows.extend(agent_run("tools:a2", 20, None));
    rows.extend(agent_run("tools:a2|tools:b1", 30, None));
    // A worker with its own checkpointer (called twice, in one namespace), and a level whose
    // parent graph has no checkpoints.
    rows.push(row("persist", "p0", None, "loop", &["__start__"]));
    rows.push(row("persist", "p1", Some("p0"), "loop", &["count"]));
    rows.push(row("persist", "p2", Some("p1"), "input", &[]));
    rows.push(row("persist", "p3", Some("p2"), "loop", &["__start__"]));
    rows.push(row("ghost:g1|inner:i1", "q0", None, "loop", &["__start__"]));
    let rows = newest_first(rows);
    let t = topology("t", &rows, &HashSet::new());
    let paths: Vec<(&str, Option<&str>, Option<&str>, u32)> = t
        .graphs
        .iter()
        .map(|g| {
            (
                g.path.as_str(),
                g.parent.as_deref(),
                g.node.as_deref(),
                g.calls,
            )
        })
        .collect();
    assert_eq!(
        paths,
        [
            ("", None, None, 1),
            ("tools", Some(""), Some("tools"), 2),
            ("tools|tools", Some("tools"), Some("tools"), 1),
            ("persist", Some(""), Some("persist"), 2),
            ("ghost", Some(""), Some("ghost"), 0),
            ("ghost|inner", Some("ghost"), Some("inner"), 1),
        ]
    );
    let sub = &t.graphs[1];
    assert_eq!(node(sub, "model").runs, 4);
    assert_eq!(edges(sub)[0], "__start__ → model ×2");
    // Checkpoints keep their namespace, to be opened.
    let at: Vec<&str> = node(sub, "tools")
        .checkpoints
        .iter()
        .map(|c| c.ns.as_str())
        .collect();
    assert_eq!(at, ["tools:a1", "tools:a2"]);
    // The node a nested graph hangs from is in its parent graph even when it never ran there.
    assert_eq!(node(&t.graphs[0], "persist").runs, 0);
    assert_eq!(node(&t.graphs[4], "inner").runs, 0);
}

#[test]
fn failures_and_interrupts_on_the_node_they_are_about() {
    let rows = newest_first(vec![
        row("", "c0", None, "input", &[]),
        row("", "c1", Some("c0"), "loop", &["__start__"]),
        // The step after c2 ran `fetch`, which failed and was never run again.
        marked(
            row("", "c2", Some("c1"), "loop", &["plan"]),
            &[Failed],
            &["fetch"],
        ),
        // A fork of c2 went on: `review` waited at an interrupt, was resumed and finished.
        row("", "c3", Some("c2"), "update", &[]),
        marked(
            row("", "c4", Some("c3"), "loop", &["review"]),
            &[Resumed],
            &["review"],
        ),
        // Then `tools` raised and finished on a retry, and `ask` waits: one row, two marks.
        marked(
            row("", "c5", Some("c4"), "loop", &["tools"]),
            &[Recovered, Interrupted],
            &["tools", "ask"],
        ),
    ]);
    assert!(end_candidates(&rows).is_empty(), "no run ended: c5 waits");
    let t = topology("t", &rows, &HashSet::new());
    let g = &t.graphs[0];
    assert_eq!(
        edges(g),
        [
            "__start__ → plan ×1",
            "plan → fetch ×1",
            "plan → review ×1",
            "review → tools ×1",
            "tools → ask ×1",
        ]
    );
    let counts = |n: &str| {
        let n = node(g, n);
        (n.runs, n.failed, n.recovered, n.interrupted, n.resumed)
    };
    assert_eq!(counts("fetch"), (0, 1, 0, 0, 0));
    assert_eq!(counts("review"), (1, 0, 0, 0, 1));
    assert_eq!(counts("tools"), (1, 0, 1, 0, 0));
    assert_eq!(counts("ask"), (0, 0, 0, 1, 0));
    let at = |n: &str| -> Vec<(String, Option<StepMark>)> {
        node(g, n)
            .checkpoints
            .iter()
            .map(|c| (c.id.clone(), c.mark))
            .collect()
    };
    assert_eq!(at("fetch"), [("c2".to_owned(), Some(Failed))]);
    assert_eq!(at("review"), [("c4".to_owned(), Some(Resumed))]);
    assert_eq!(at("tools"), [("c5".to_owned(), Some(Recovered))]);
    assert_eq!(at("ask"), [("c5".to_owned(), Some(Interrupted))]);
}

#[test]
fn an_interrupted_node_that_ran_since_has_no_second_edge() {
    // c2 still says its next step waited once (a branch resumed from it went on).
    let rows = newest_first(vec![
        row("", "c1", None, "loop", &["__start__"]),
        marked(
            row("", "c2", Some("c1"), "loop", &["model"]),
            &[Interrupted],
            &["human"],
        ),
        row("", "c3", Some("c2"), "loop", &["human"]),
    ]);
    let g = &topology("t", &rows, &HashSet::new()).graphs[0];
    assert_eq!(edges(g), ["__start__ → model ×1", "model → human ×1"]);
    assert_eq!(
        (node(g, "human").runs, node(g, "human").interrupted),
        (1, 1)
    );
}

#[test]
fn one_mark_kind_goes_to_every_node_named() {
    let r = marked(row("", "c1", None, "loop", &["a"]), &[Failed], &["x", "y"]);
    assert_eq!(marked_nodes(&r), [(Failed, "x"), (Failed, "y")]);
    // A tip whose next step's task recovered: about a node not in `ran`.
    let r = marked(row("", "c1", None, "loop", &["a"]), &[Recovered], &["x"]);
    assert_eq!(marked_nodes(&r), [(Recovered, "x")]);
}

#[test]
fn threads_of_one_graph_add_up() {
    let one = newest_first(agent_run("", 0, None));
    let mut b = TopologyBuilder::default();
    b.add("t1", &one, &ended(&[("", "c4")]));
    b.add("t2", &one, &HashSet::new());
    let t = b.build();
    let g = &t.graphs[0];
    assert_eq!(g.calls, 2);
    assert_eq!(edges(g)[0], "__start__ → model ×2");
    assert_eq!(edges(g)[3], "model → __end__ ×1");
    let threads: Vec<&str> = node(g, "tools")
        .checkpoints
        .iter()
        .map(|c| c.thread_id.as_str())
        .collect();
    assert_eq!(threads, ["t1", "t2"]);
}

#[test]
fn rows_without_names_give_no_nodes() {
    // Written before LangGraph stored task paths: the steps' nodes are unknown.
    let rows = newest_first(vec![
        row("", "c0", None, "input", &[]),
        row("", "c1", Some("c0"), "loop", &[]),
    ]);
    assert!(end_candidates(&rows).is_empty());
    let t = topology("t", &rows, &ended(&[("", "c1")]));
    assert_eq!(t.graphs.len(), 1);
    assert!(t.graphs[0].nodes.is_empty());
    assert_eq!(t.graphs[0].calls, 1);
}
