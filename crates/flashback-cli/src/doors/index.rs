//! The door of `flashback index`: the advice, or `--create` / `--drop` previewed (`--yes`
//! runs it), as text or `--json` (the app's `IndexReport` / `IndexApplyReport`).

use super::{done, open, render, Outcome};
use crate::human;
use crate::Command;
use flashback_api::*;

pub(super) async fn run(cmd: Command) -> Result<Outcome, ApiError> {
    let Command::Index {
        db,
        create,
        drop,
        yes,
        json,
    } = cmd
    else {
        unreachable!("only `index` reaches this door")
    };
    let action = match (create.is_empty(), drop.is_empty()) {
        (true, true) if yes => {
            return Err(ApiError::invalid(
                "--yes goes with --create NAME|all or --drop NAME|all",
            ))
        }
        (true, true) => None,
        (false, _) => Some((IndexAction::Create, create)),
        (true, false) => Some((IndexAction::Drop, drop)),
    };
    let (api, db) = open(&db).await?;
    let Some((action, names)) = action else {
        let advice = api.index_advice(IndexAdviceRequest { db }).await?;
        return done(render(json, &advice, human::index_advice));
    };
    let req = IndexApplyRequest {
        db,
        action,
        names,
        dry_run: !yes,
    };
    let report = api.index_apply(req).await?;
    done(render(json, &report, human::index_applied))
}
