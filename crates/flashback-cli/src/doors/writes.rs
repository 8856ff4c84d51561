//! The doors of the writing commands: fork, merge, delete, delete-branch, prune, copy.

use super::{done, json_text, open, render, Outcome};
use crate::human;
use crate::Command;
use flashback_api::*;

pub(super) async fn run(cmd: Command) -> Result<Outcome, ApiError> {
    match cmd {
        Command::Fork {
            db,
            thread,
            checkpoint,
            ns,
            set,
            as_node,
            json,
        } => {
            let edits = parse_sets(&set)?;
            let (api, db) = open(&db).await?;
            let checkpoint =
                super::ids::resolve(&api, &db, &thread, Some(&ns), &checkpoint).await?;
            let req = ForkRequest {
                db,
                thread_id: thread,
                checkpoint_ns: ns,
                checkpoint_id: checkpoint,
                edits,
                as_node,
            };
            let forked = api.fork_checkpoint(req).await?;
            done(render(json, &forked, |f| format!("{}\n", f.checkpoint_id)))
        }
        Command::Merge {
            db,
            thread,
            into,
            from,
            channels,
            ns,
            dry_run,
            json,
        } => {
            let channels = parse_merge_channels(&channels)?;
            let (api, db) = open(&db).await?;
            let into = super::ids::resolve(&api, &db, &thread, Some(&ns), &into).await?;
            let from = super::ids::resolve(&api, &db, &thread, Some(&ns), &from).await?;
            if dry_run {
                let req = MergePreviewRequest {
                    db,
                    thread_id: thread,
                    checkpoint_ns: ns,
                    into,
                    from,
                    channels: channels.into_iter().map(|c| c.channel).collect(),
                };
                // The 3-way view is data to read: JSON either way.
                return done(json_text(&api.merge_preview(req).await?));
            }
            let req = MergeRequest {
                db,
                thread_id: thread,
                checkpoint_ns: ns,
                into,
                from,
                channels,
            };
            let merged = api.merge_branches(req).await?;
            done(render(json, &merged, |m| format!("{}\n", m.checkpoint_id)))
        }
        Command::Delete {
            db,
            thread,
            yes,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let req = DeleteRequest {
                db,
                thread_id: thread,
                dry_run: !yes,
            };
            let report = api.delete_thread(req).await?;
            done(render(json, &report, human::deleted))
        }
        Command::DeleteBranch {
            db,
            thread,
            checkpoint,
            ns,
            yes,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let checkpoint =
                super::ids::resolve(&api, &db, &thread, Some(&ns), &checkpoint).await?;
            let req = DeleteBranchRequest {
                db,
                thread_id: thread,
                checkpoint_ns: ns,
                checkpoint_id: checkpoint,
                dry_run: !yes,
                expect_checkpoints: None,
            };
            let summary = api.delete_branch(req).await?;
            done(render(json, &summary, human::pruned))
        }
        Command::Prune {
            db,
            threads,
            older_than,
            status,
            keep_last,
            strategy,
            vacuum,
            force_vacuum,
            yes,
            json,
        } => {
            let strategy = strategy.parse::<PruneStrategy>().map_err(ApiError::from)?;
            let across = older_than.is_some() || !status.is_empty() || keep_last.is_some();
            if !across && !vacuum {
                if threads.is_empty() {
                    return Err(ApiError::invalid(
                        "choose what to prune: thread ids, --older-than AGE or --status STATUS \
                         (nothing is pruned by default)",
                    ));
                }
                let (api, db) = open(&db).await?;
                let req = PruneRequest {
                    db,
                    thread_ids: threads,
                    strategy,
                    dry_run: !yes,
                };
                let summary = api.prune_threads(req).await?;
                return done(render(json, &summary, human::pruned));
            }
            let statuses = status
                .iter()
                .map(|s| serde_json::from_value(serde_json::Value::from(s.as_str())))
                .collect::<Result<Vec<StatusFilter>, _>>()
                .map_err(|e| ApiError::invalid(format!("--status: {e}")))?;
            let (api, db) = open(&db).await?;
            let req = RetentionRequest {
                db,
                thread_ids: threads,
                older_than,
                statuses,
                strategy,
                keep_last,
                vacuum,
                force_vacuum,
                dry_run: !yes,
            };
            let report = api.prune_database(req).await?;
            let text = render(json, &report, human::retention);
            match &report.vacuum_error {
                // The prune committed; the VACUUM did not run through: say both, exit non-zero.
                Some(e) => Ok(Outcome::Failed(
                    text,
                    ApiError::new(ErrorCode::Query, human::vacuum_failed(e)),
                )),
                None => done(text),
            }
        }
        Command::Copy {
            db,
            source,
            target,
            to,
            json,
        } => {
            let (api, db) = open(&db).await?;
            let to_db = match to {
                Some(location) => Some(
                    api.open_database(OpenRequest {
                        location,
                        password: None,
                        remember: false,
                        save_password: false,
                    })
                    .await?
                    .db,
                ),
                None => None,
            };
            let req = CopyRequest {
                db,
                thread_id: source.clone(),
                target_thread_id: target.clone(),
                to_db,
            };
            let report = api.copy_thread(req).await?;
            // An Agent Server names the copy itself.
            let target = report.thread_id.clone().unwrap_or(target);
            done(render(json, &report, |r| {
                human::copied(r, &source, &target)
            }))
        }
        other => Err(ApiError::new(
            ErrorCode::Internal,
            format!("not a writing command: {other:?}"),
        )),
    }
}

fn parse_sets(sets: &[String]) -> Result<Vec<ChannelEdit>, ApiError> {
    sets.iter()
        .map(|s| {
            let (channel, value) = s
                .split_once('=')
                .ok_or_else(|| ApiError::invalid(format!("--set {s:?}: expected CHANNEL=JSON")))?;
            let value = serde_json::from_str(value).map_err(|e| {
                ApiError::invalid(format!(
                    "--set {channel}: the value is not valid JSON ({e})"
                ))
            })?;
            Ok(ChannelEdit {
                channel: channel.to_owned(),
                value,
            })
        })
        .collect()
}

fn parse_merge_channels(channels: &[String]) -> Result<Vec<MergeChannel>, ApiError> {
    channels
        .iter()
        .map(|c| {
            let (channel, mode) = match c.split_once('=') {
                None => (c.as_str(), MergeMode::TakeB),
                Some((ch, "take")) => (ch, MergeMode::TakeB),
                Some((ch, "append")) => (ch, MergeMode::AppendB),
                Some((_, other)) => {
                    return Err(ApiError::invalid(format!(
                        "--channel {c:?}: mode must be take or append, not {other:?}"
                    )))
                }
            };
            Ok(MergeChannel {
                channel: channel.to_owned(),
                mode,
            })
        })
        .collect()
}
