//! `flashback rebuild --repair`: the damaged blob rows, how each is rebuilt or why not, and
//! what was (or would be) written.

use super::{ns_label, wire_name};
use flashback_api::RepairReport;

/// The repair report, one block per damaged row.
pub fn repaired(r: &RepairReport) -> String {
    if r.damaged.is_empty() {
        return format!("thread {}: no damaged blob rows\n", r.thread_id);
    }
    let fixable = r.damaged.iter().filter(|d| d.reducer.is_some()).count();
    let through = r
        .damaged
        .iter()
        .filter(|d| d.reducer.is_none() && d.cannot.is_none())
        .count();
    let mut out = format!(
        "thread {}: {} damaged blob row{}; {fixable} can be rebuilt from the writes{}{}\n",
        r.thread_id,
        r.damaged.len(),
        if r.damaged.len() == 1 { "" } else { "s" },
        match through {
            0 => String::new(),
            n => format!(", {n} read again through a rebuilt row"),
        },
        match r.damaged.len() - fixable - through {
            0 => String::new(),
            n => format!(", {n} cannot"),
        }
    );
    for d in &r.damaged {
        out.push_str(&format!(
            "  {} {} @ {}: {}\n",
            ns_label(&d.checkpoint_ns),
            d.channel,
            d.version,
            d.problem
        ));
        let named = match d.checkpoints.as_slice() {
            [one] => format!("named by {one}"),
            many => format!("named by {} checkpoints", many.len()),
        };
        match (&d.cannot, d.reducer) {
            (Some(why), _) => out.push_str(&format!("    cannot rebuild ({named}): {why}\n")),
            (None, Some(reducer)) => out.push_str(&format!(
                "    rebuilt with {} from {} write{} of the step to {} ({named}): {}\n",
                wire_name(&reducer),
                d.writes,
                if d.writes == 1 { "" } else { "s" },
                d.produced_at.as_deref().unwrap_or("?"),
                d.preview.as_deref().unwrap_or("")
            )),
            (None, None) => out.push_str(&format!(
                "    its own row is intact: it reads again once version {} is rebuilt\n",
                d.cause.as_deref().unwrap_or("?")
            )),
        }
        if let (Some(note), Some(_)) = (&d.note, d.reducer) {
            out.push_str(&format!("    note: {note}\n"));
        }
    }
    if r.dry_run {
        out.push_str(&format!(
            "would write {fixable} row{} (dry run; add --yes)\n",
            if fixable == 1 { "" } else { "s" }
        ));
    } else {
        out.push_str(&format!(
            "wrote {} row{} in one transaction; {} still damaged\n",
            r.repaired,
            if r.repaired == 1 { "" } else { "s" },
            r.left
        ));
    }
    out
}
