//! `get_tuples` (many checkpoints in one go) returns exactly what `get_tuple` returns for each
//! key, in order, on the SQLite fixture written by the real LangGraph.

use flashback_storage::sqlite::SqliteStore;
use flashback_storage::{CheckpointStore, ListQuery};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/langgraph.sqlite"
);

#[tokio::test]
async fn get_tuples_matches_get_tuple_key_by_key() {
    let store = SqliteStore::open(FIXTURE).await.expect("open fixture");
    let threads = store.list_threads().await.expect("threads");
    assert!(threads.len() >= 12);
    // Every thread's latest root checkpoint, the latest of every namespace (no id), every
    // checkpoint of one thread by id, and keys that match nothing.
    let mut keys: Vec<(String, String, Option<String>)> = Vec::new();
    for t in &threads {
        keys.push((
            t.thread_id.clone(),
            String::new(),
            t.latest_checkpoint_id.clone(),
        ));
        for ns in &t.namespaces {
            keys.push((t.thread_id.clone(), ns.clone(), None));
        }
    }
    let forked = store
        .list_headers(&ListQuery::thread("forked"))
        .await
        .expect("headers");
    for h in &forked {
        keys.push((
            "forked".into(),
            String::new(),
            Some(h.checkpoint_id.clone()),
        ));
    }
    // The same key twice, read in file order but answered in the keys' order.
    keys.push(keys[0].clone());
    keys.push(("forked".into(), String::new(), Some("no-such-id".into())));
    keys.push(("no-such-thread".into(), String::new(), None));

    let borrowed: Vec<(&str, &str, Option<&str>)> = keys
        .iter()
        .map(|(t, ns, id)| (t.as_str(), ns.as_str(), id.as_deref()))
        .collect();
    let many = store.get_tuples(&borrowed).await.expect("get_tuples");
    assert_eq!(many.len(), keys.len());
    for ((t, ns, id), got) in borrowed.iter().zip(&many) {
        let one = store.get_tuple(t, ns, *id).await.expect("get_tuple");
        // Compared as Debug text: `rich-types` holds a NaN, which is never `==` itself.
        assert!(
            format!("{got:?}") == format!("{one:?}"),
            "{t} {ns:?} {id:?} differs"
        );
    }
    assert_eq!(
        many.iter().filter(|t| t.is_none()).count(),
        2,
        "only the two bad keys miss"
    );
    assert!(store.get_tuples(&[]).await.expect("no keys").is_empty());
}

#[tokio::test]
async fn thread_namespaces_are_those_of_the_threads_checkpoints() {
    let store = SqliteStore::open(FIXTURE).await.expect("open fixture");
    let threads = store.list_threads().await.expect("threads");
    assert!(
        threads.iter().any(|t| t.namespaces.len() > 1),
        "a subgraph thread"
    );
    for t in &threads {
        let mut want: Vec<String> = store
            .list_headers(&ListQuery::thread(&t.thread_id))
            .await
            .expect("headers")
            .into_iter()
            .map(|h| h.checkpoint_ns)
            .collect();
        want.sort();
        want.dedup();
        let got = store.thread_namespaces(&t.thread_id).await.expect("ns");
        assert_eq!(got, want, "{}", t.thread_id);
    }
    assert!(store
        .thread_namespaces("no-such-thread")
        .await
        .expect("ns")
        .is_empty());
}
