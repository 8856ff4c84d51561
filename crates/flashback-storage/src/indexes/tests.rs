use super::*;

fn advice(name: &str, state: IndexState, recommended: bool) -> IndexAdvice {
    IndexAdvice {
        name: name.into(),
        table: "checkpoints".into(),
        definition: format!("CREATE INDEX IF NOT EXISTS {name} ON checkpoints (x)"),
        speeds: Vec::new(),
        state,
        size_bytes: None,
        estimated_bytes: 10,
        estimated_seconds: 1.0,
        estimate: None,
        recommended,
    }
}

fn report() -> IndexReport {
    IndexReport {
        applicable: true,
        summary: String::new(),
        checkpoints: 1_000_000,
        table_bytes: 0,
        indexes: vec![
            advice(RECENT, IndexState::Missing, true),
            advice(
                "flashback_checkpoints_meta_user_id",
                IndexState::Present,
                false,
            ),
            advice(METADATA_GIN, IndexState::Invalid, true),
        ],
        others: vec!["flashback_old".into()],
    }
}

#[test]
fn create_all_builds_what_is_missing_and_rebuilds_an_invalid_one() {
    let plan = choose(&report(), IndexAction::Create, &["all".into()], true).unwrap();
    assert_eq!(plan.names, vec![RECENT.to_owned(), METADATA_GIN.to_owned()]);
    assert_eq!(
        plan.statements[1],
        format!("DROP INDEX CONCURRENTLY IF EXISTS {METADATA_GIN}")
    );
    assert_eq!(plan.estimated_bytes, 20);
}

#[test]
fn drop_all_drops_ours_only_and_what_is_there() {
    let plan = choose(&report(), IndexAction::Drop, &["all".into()], false).unwrap();
    assert_eq!(
        plan.statements,
        vec![
            "DROP INDEX IF EXISTS flashback_checkpoints_meta_user_id".to_owned(),
            format!("DROP INDEX IF EXISTS {METADATA_GIN}"),
            "DROP INDEX IF EXISTS flashback_old".to_owned(),
        ]
    );
    assert!(plan.statements.iter().all(|s| s.contains(PREFIX)));
}

#[test]
fn an_unknown_name_is_refused_with_the_choices() {
    let e = choose(&report(), IndexAction::Create, &["pkey".into()], false).unwrap_err();
    assert!(e.to_string().contains(RECENT), "{e}");
}

#[test]
fn all_creates_every_missing_index_even_where_not_needed() {
    let mut r = report();
    r.indexes[0].recommended = false;
    let plan = choose(&r, IndexAction::Create, &["all".into()], false).unwrap();
    assert_eq!(plan.names, vec![RECENT.to_owned(), METADATA_GIN.to_owned()]);
    let one = choose(&r, IndexAction::Create, &[RECENT.into()], false).unwrap();
    assert_eq!(one.statements, vec![r.indexes[0].definition.clone()]);
}

#[test]
fn metadata_index_names_are_ours_and_safe() {
    assert_eq!(
        sqlite_metadata_index("user_id"),
        "flashback_checkpoints_meta_user_id"
    );
    assert_eq!(
        sqlite_metadata_index("a.b-c"),
        "flashback_checkpoints_meta_a_b_c"
    );
}

/// SQLite's planner serves the metadata filter — the query `sqlite/query.rs` builds — from
/// the expression index, and the newest-first walk from the covering index, with no sort.
#[test]
fn sqlite_plans_use_the_indexes() {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', \
         checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, \
         metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
         INSERT INTO checkpoints VALUES ('t', '', '1', NULL, NULL, NULL, CAST('{bad' AS BLOB));",
    )
    .unwrap();
    let explain = |sql: &str| super::sqlite::explain(&conn, sql).unwrap();
    let q = crate::ListQuery {
        filter: serde_json::json!({"user_id": "u-1", "graph_id": "g"})
            .as_object()
            .cloned()
            .unwrap(),
        ..Default::default()
    };
    let (where_sql, _) = crate::sqlite::query::search_where(&q).unwrap();
    let find = format!(
        "SELECT thread_id, MAX(checkpoint_id) AS m FROM checkpoints {where_sql} \
         GROUP BY thread_id ORDER BY m DESC LIMIT 50"
    );
    assert!(explain(&find).contains("SCAN checkpoints"));
    // Built over a row whose metadata is not JSON.
    conn.execute_batch(&super::sqlite::metadata_definition("user_id"))
        .unwrap();
    let plan = explain(&find);
    assert!(
        plan.contains(&sqlite_metadata_index("user_id")) && !plan.contains("SCAN checkpoints"),
        "{plan}"
    );
    conn.execute_batch(&super::sqlite::recent_definition())
        .unwrap();
    let plan = explain(&format!(
        "SELECT thread_id FROM checkpoints INDEXED BY {RECENT} WHERE checkpoint_ns = '' \
         ORDER BY checkpoint_id DESC, thread_id"
    ));
    assert!(
        plan.contains("COVERING INDEX") && !plan.contains("TEMP B-TREE"),
        "{plan}"
    );
}
