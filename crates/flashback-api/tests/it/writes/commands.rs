//! The write commands on copies of the SQLite fixture: forks, edit forks, merges, delete and prune.

use crate::common;
use common::*;
use flashback_api::*;
use serde_json::json;

#[tokio::test]
async fn fork_edit_fork_and_merge_show_up_as_new_branches() {
    let OpenedFixture {
        dir: _dir, api, db, ..
    } = opened_fixture().await;
    let before = graph(&api, &db, "forked").await;
    let fork_point = before
        .rows
        .iter()
        .find(|r| r.fork_point)
        .expect("fork point")
        .clone();

    let copy = api
        .fork_checkpoint(ForkRequest {
            as_node: None,
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: fork_point.id.clone(),
            edits: vec![],
        })
        .await
        .expect("copy fork");
    assert_eq!(copy.parent_checkpoint_id, fork_point.id);
    let after = graph(&api, &db, "forked").await;
    assert_eq!(after.rows.len(), before.rows.len() + 1);
    assert_eq!(
        after.rows[0].id, copy.checkpoint_id,
        "the fork is the new head"
    );
    assert_eq!(after.rows[0].flashback_action.as_deref(), Some("copy_fork"));
    assert_eq!(after.width, before.width + 1, "a new lane");

    // Edit fork: the value is validated first, then written.
    let d = detail(&api, &db, "forked", "", &fork_point.id).await;
    let channel = d
        .values
        .iter()
        .find(|(_, v)| v.is_array())
        .expect("a list channel")
        .0
        .clone();
    let good = ChannelEdit {
        channel: channel.clone(),
        value: json!(["edited in the test"]),
    };
    let check = api
        .validate_edit(ValidateEditRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: fork_point.id.clone(),
            edit: good.clone(),
        })
        .await
        .expect("validate");
    assert!(check.ok, "{check:?}");
    let bad = ChannelEdit {
        channel: channel.clone(),
        value: json!({"$type": "builtins.bytes", "base64": "%%%"}),
    };
    let check = api
        .validate_edit(ValidateEditRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: fork_point.id.clone(),
            edit: bad.clone(),
        })
        .await
        .expect("validate");
    assert!(!check.ok);
    assert!(
        check
            .path
            .as_deref()
            .is_some_and(|p| p.starts_with("values.")),
        "{check:?}"
    );

    let rejected = api
        .fork_checkpoint(ForkRequest {
            as_node: None,
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: fork_point.id.clone(),
            edits: vec![bad],
        })
        .await
        .expect_err("the engine rejects a bad value");
    assert_eq!(rejected.code, ErrorCode::InvalidEdit);
    assert_eq!(
        graph(&api, &db, "forked").await.rows.len(),
        after.rows.len(),
        "a rejected fork writes nothing"
    );

    let edited = api
        .fork_checkpoint(ForkRequest {
            as_node: None,
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: fork_point.id.clone(),
            edits: vec![good],
        })
        .await
        .expect("edit fork");
    let d = detail(&api, &db, "forked", "", &edited.checkpoint_id).await;
    assert_eq!(d.values[&channel], json!(["edited in the test"]));
    assert_eq!(d.source.as_deref(), Some("update"));

    // Diff the edit fork against its source: the edited channel changed.
    let diff = api
        .diff_checkpoints(DiffRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            a: CheckpointRef {
                checkpoint_ns: String::new(),
                checkpoint_id: fork_point.id.clone(),
            },
            b: CheckpointRef {
                checkpoint_ns: String::new(),
                checkpoint_id: edited.checkpoint_id.clone(),
            },
        })
        .await
        .expect("diff");
    assert_eq!(diff.channels[0].channel, channel, "changed channels first");

    // Merge the edited channel into the copy fork's branch.
    let preview = api
        .merge_preview(MergePreviewRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            into: copy.checkpoint_id.clone(),
            from: edited.checkpoint_id.clone(),
            channels: vec![channel.clone()],
        })
        .await
        .expect("3-way");
    assert_eq!(
        preview[0].fork_point.as_deref(),
        Some(fork_point.id.as_str())
    );
    let merged = api
        .merge_branches(MergeRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            into: copy.checkpoint_id.clone(),
            from: edited.checkpoint_id.clone(),
            channels: vec![MergeChannel {
                channel: channel.clone(),
                mode: MergeMode::TakeB,
            }],
        })
        .await
        .expect("merge");
    assert_eq!(merged.parent_checkpoint_id, copy.checkpoint_id);
    let g = graph(&api, &db, "forked").await;
    assert_eq!(g.rows[0].flashback_action.as_deref(), Some("merge"));

    // Replay the merged branch: root first, the merge last.
    let steps = api
        .replay_steps(ReplayRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            tip: Some(merged.checkpoint_id.clone()),
        })
        .await
        .expect("replay");
    assert_eq!(
        steps.last().map(|s| s.checkpoint_id.as_str()),
        Some(merged.checkpoint_id.as_str())
    );
    assert_eq!(steps[0].source.as_deref(), Some("input"));
}

#[tokio::test]
async fn delete_and_prune_preview_then_write() {
    let OpenedFixture {
        dir: _dir,
        path,
        api,
        db,
    } = opened_fixture().await;
    let before = fingerprint(&path);
    let preview = api
        .delete_thread(DeleteRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            dry_run: true,
        })
        .await
        .expect("preview");
    assert_eq!(preview.checkpoints, 14);
    assert!(preview.writes > 0);
    let prune = api
        .prune_threads(PruneRequest {
            db: db.db.clone(),
            thread_ids: vec!["long".into()],
            strategy: PruneStrategy::KeepLatest,
            dry_run: true,
        })
        .await
        .expect("prune preview");
    assert_eq!(prune.checkpoints.len(), 299);
    assert_eq!(fingerprint(&path), before, "previews write nothing");

    api.delete_thread(DeleteRequest {
        db: db.db.clone(),
        thread_id: "forked".into(),
        dry_run: false,
    })
    .await
    .expect("delete");
    api.prune_threads(PruneRequest {
        db: db.db.clone(),
        thread_ids: vec!["long".into()],
        strategy: PruneStrategy::KeepLatest,
        dry_run: false,
    })
    .await
    .expect("prune");
    let threads = api
        .list_threads(ThreadsRequest {
            limit: None,
            db: db.db.clone(),
            ..Default::default()
        })
        .await
        .expect("threads");
    assert!(threads.iter().all(|t| t.thread_id != "forked"));
    assert_eq!(
        threads
            .iter()
            .find(|t| t.thread_id == "long")
            .map(|t| t.checkpoint_count),
        Some(1)
    );
    let err = api
        .delete_thread(DeleteRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            dry_run: true,
        })
        .await
        .expect_err("gone");
    assert_eq!(err.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn forks_merges_and_reruns_inside_a_subgraph_are_refused_with_the_reason() {
    let OpenedFixture {
        dir: _dir, api, db, ..
    } = opened_fixture().await;
    let before = graph(&api, &db, "subgraph").await;
    let inner = before
        .rows
        .iter()
        .find(|r| !r.ns.is_empty())
        .expect("a subgraph checkpoint")
        .clone();
    let refused = |e: ApiError| {
        assert_eq!(e.code, ErrorCode::InvalidInput, "{e:?}");
        assert!(
            e.message.contains("subgraph namespace") && e.message.contains(&inner.ns),
            "{}",
            e.message
        );
        assert!(!e.message.contains('\n'), "one line: {}", e.message);
    };
    let fork = api
        .fork_checkpoint(ForkRequest {
            as_node: None,
            db: db.db.clone(),
            thread_id: "subgraph".into(),
            checkpoint_ns: inner.ns.clone(),
            checkpoint_id: inner.id.clone(),
            edits: vec![],
        })
        .await
        .expect_err("a fork inside a subgraph");
    refused(fork);
    let merge = api
        .merge_branches(MergeRequest {
            db: db.db.clone(),
            thread_id: "subgraph".into(),
            checkpoint_ns: inner.ns.clone(),
            into: inner.id.clone(),
            from: inner.id.clone(),
            channels: vec![],
        })
        .await
        .expect_err("a merge inside a subgraph");
    refused(merge);
    // Nothing was written.
    let after = graph(&api, &db, "subgraph").await;
    assert_eq!(after.rows.len(), before.rows.len());
}
