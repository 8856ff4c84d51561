//! Which view of a checkpoint `state` shows (Python's live `get_state(config)` or the step
//! record), and what the thread tells about its channels' reducers: a value of each channel
//! the checkpoint lacks (from the namespace's latest checkpoint, for the empty defaults Python
//! shows) and, when the live view applies writes to a list or dict channel not known by name,
//! the steps just before it (at most [`EVIDENCE_STEPS`] ancestors read).

use crate::detail::View;
use crate::error::ApiResult;
use crate::types::CheckpointRequest;
use flashback_codec::Decoded;
use flashback_engine::is_control_channel;
use flashback_engine::live::Reducers;
use flashback_engine::tasks::step_tasks;
use flashback_storage::{CheckpointStore, CheckpointTuple, Dialect, ListQuery};
use std::sync::Arc;

/// How many ancestors are read for a reducer's evidence.
pub const EVIDENCE_STEPS: usize = 4;

/// The view the request asks for (see [`CheckpointRequest::live`]).
async fn is_live(store: &dyn CheckpointStore, req: &CheckpointRequest) -> ApiResult<bool> {
    Ok(match (req.live, &req.checkpoint_id) {
        (Some(false), _) => false,
        (None, id) => id.is_none(),
        (Some(true), None) => true,
        (Some(true), Some(id)) => {
            let latest = store
                .list_headers(&ListQuery {
                    checkpoint_ns: Some(req.checkpoint_ns.clone()),
                    limit: Some(1),
                    ..ListQuery::thread(&req.thread_id)
                })
                .await?;
            latest.first().is_some_and(|h| &h.checkpoint_id == id)
        }
    })
}

/// The view of `tuple` the request asks for, with what the thread says of its channels. Reads
/// that only add evidence do not fail the view.
pub(crate) async fn view_for(
    store: &dyn CheckpointStore,
    req: &CheckpointRequest,
    tuple: &CheckpointTuple,
    dialect: Dialect,
) -> ApiResult<View> {
    let mut view = View {
        live: is_live(store, req).await?,
        ..View::default()
    };
    if tuple.served.is_some() {
        return Ok(view);
    }
    // The namespace's latest checkpoint, with only the values this one lacks.
    let have: Vec<String> = tuple
        .checkpoint
        .channel_values
        .iter()
        .map(|(c, _)| c.clone())
        .collect();
    let keep = Arc::new(move |c: &str| !is_control_channel(c) && !have.iter().any(|h| h == c));
    let key = [(req.thread_id.as_str(), req.checkpoint_ns.as_str(), None)];
    if let Ok(found) = store.get_tuples_selecting(&key, keep).await {
        for head in found.into_iter().flatten() {
            if head.header.checkpoint_id == tuple.header.checkpoint_id {
                continue;
            }
            for (c, v) in &head.checkpoint.channel_values {
                if let Decoded::Msgpack(v) = v.as_ref() {
                    view.known.insert(c.clone(), v.clone());
                }
            }
        }
    }
    if view.live {
        view.reducers = evidence(store, tuple, dialect).await;
    }
    Ok(view)
}

/// Reducers learnt from the steps before `tuple`, read only while the live view has writes to
/// apply to a channel whose reducer is not settled.
async fn evidence(
    store: &dyn CheckpointStore,
    tuple: &CheckpointTuple,
    dialect: Dialect,
) -> Reducers {
    let mut reducers = Reducers::default();
    let tasks = step_tasks(tuple, dialect);
    if reducers.unsettled(tuple, &tasks).is_empty() {
        return reducers;
    }
    let h = &tuple.header;
    let mut child: Option<CheckpointTuple> = None;
    let mut next = h.parent_checkpoint_id.clone();
    for _ in 0..EVIDENCE_STEPS {
        let Some(id) = next.take() else { break };
        let Ok(Some(parent)) = store
            .get_tuple(&h.thread_id, &h.checkpoint_ns, Some(&id))
            .await
        else {
            break;
        };
        let made = child.as_ref().unwrap_or(tuple);
        reducers.learn_step(&parent, &step_tasks(&parent, dialect), made);
        if reducers.unsettled(tuple, &tasks).is_empty() {
            break;
        }
        next = parent.header.parent_checkpoint_id.clone();
        child = Some(parent);
    }
    reducers
}
