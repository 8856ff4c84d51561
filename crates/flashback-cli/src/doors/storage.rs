//! The door of `flashback storage`: the storage report job, followed as `search` and
//! `convert` are (progress on stderr, Ctrl-C as cancel); `--json` prints the job's result,
//! the app's `StorageReport`.

use super::jobs::follow;
use super::{done, open, render, Outcome};
use crate::human;
use crate::Command;
use flashback_api::*;

pub(super) async fn run(cmd: Command) -> Result<Outcome, ApiError> {
    let Command::Storage {
        db,
        thread,
        top,
        json,
    } = cmd
    else {
        unreachable!("only `storage` reaches this door")
    };
    let (api, db) = open(&db).await?;
    let req = StorageRequest {
        db,
        thread_id: thread,
        top: Some(top),
    };
    let job = api.start_storage_report(req).await?;
    let report: StorageReport = follow(&api, job, |_| {}).await?;
    done(render(json, &report, human::storage))
}
