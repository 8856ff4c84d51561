//! The door of `flashback topology`: the nodes and transitions of a thread (and of the other
//! threads named, added up), as text or `--json` (the app's `ThreadTopology`).

use super::{done, open, render, Outcome};
use crate::human;
use crate::Command;
use flashback_api::*;

pub(super) async fn run(cmd: Command) -> Result<Outcome, ApiError> {
    let Command::Topology {
        db,
        thread,
        more,
        json,
    } = cmd
    else {
        unreachable!("only `topology` reaches this door")
    };
    let (api, db) = open(&db).await?;
    let req = TopologyRequest {
        db,
        thread_id: thread,
        thread_ids: more,
    };
    let topology = api.thread_topology(req).await?;
    done(render(json, &topology, human::topology))
}
