//! The door of `flashback index`: the advice, or `--create` / `--drop` previewed (`--yes`
//! runs it: the `start_index_apply` job, followed as `storage` is — progress on stderr, Ctrl-C
//! as cancel, which stops the build and undoes it), as text or `--json` (the app's
//! `IndexReport` / `IndexApplyReport`).

use super::jobs::follow;
use super::{done, open, render, Outcome};
use crate::human;
use flashback_api::*;

/// `flashback index`'s arguments.
#[derive(clap::Args, Debug)]
pub struct IndexArgs {
    /// A `.sqlite` file or a `postgres://` URL (other sources: not applicable).
    pub db: String,
    /// Create these indexes (names from the advice, or `all`: every one not there).
    #[arg(long, value_name = "NAME|all", conflicts_with = "drop")]
    pub create: Vec<String>,
    /// Drop these indexes (`all`: every `flashback_*` index on the table).
    #[arg(long, value_name = "NAME|all")]
    pub drop: Vec<String>,
    /// Really create or drop (without it, nothing is written and the statements are shown).
    #[arg(long)]
    pub yes: bool,
    /// Print JSON (`IndexReport`; with --create/--drop, `IndexApplyReport`).
    #[arg(long)]
    pub json: bool,
}

pub(super) async fn run(a: IndexArgs) -> Result<Outcome, ApiError> {
    let IndexArgs {
        db,
        create,
        drop,
        yes,
        json,
    } = a;
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
    let report: IndexApplyReport = match yes {
        false => api.index_apply(req).await?,
        true => {
            let job = api.start_index_apply(req).await?;
            follow(&api, job, |_| {}).await?
        }
    };
    done(render(json, &report, human::index_applied))
}
