//! Human-in-the-loop approvals in `flashback state`: each tool call waiting for review as a
//! card (tool, arguments, description, allowed decisions), then the resume value that
//! approves them all, in the middleware's format, to adapt and pass to `rerun --resume`.

use flashback_api::{Approval, ApprovalMode, CheckpointDetail};
use serde_json::{json, Map, Value as Json};

/// The value that approves every call of `approvals`: `{"decisions": [...]}` for one batched
/// interrupt; several interrupts (or a per-call one) keyed by interrupt id.
pub fn approve_all(approvals: &[Approval]) -> Json {
    let answer = |a: &Approval| match a.mode {
        ApprovalMode::Batched => {
            json!({"decisions": a.actions.iter().map(|_| json!({"type": "approve"})).collect::<Vec<_>>()})
        }
        ApprovalMode::PerCall => json!({"type": "approve"}),
    };
    match approvals {
        [one] if one.mode == ApprovalMode::Batched => answer(one),
        many => {
            let mut m = Map::new();
            for a in many {
                let key = a.interrupt_id.clone().unwrap_or_default();
                m.insert(key, answer(a));
            }
            Json::Object(m)
        }
    }
}

/// The cards and the approve-all resume value (empty when nothing waits for approval).
pub fn approvals(d: &CheckpointDetail) -> String {
    if d.approvals.is_empty() {
        return String::new();
    }
    let mut out = String::from("\napprovals (HumanInTheLoopMiddleware):\n");
    for a in &d.approvals {
        let mode = match a.mode {
            ApprovalMode::Batched => "batched",
            ApprovalMode::PerCall => "per call",
        };
        out.push_str(&format!(
            "  interrupt {} ({mode}, task {} {})\n",
            a.interrupt_id.as_deref().unwrap_or("-"),
            a.node,
            super::clip(&a.task_id, 8)
        ));
        for action in &a.actions {
            out.push_str(&format!(
                "    {}({})\n",
                action.name,
                super::clip(&super::one_line(&action.args), super::WIDTH - 10)
            ));
            if let Some(desc) = &action.description {
                for l in desc.lines() {
                    out.push_str(&format!("      {l}\n"));
                }
            }
            out.push_str(&format!(
                "      decisions: {}\n",
                action.allowed_decisions.join(", ")
            ));
        }
    }
    out.push_str(&format!(
        "  resume (approve all): {}\n  each decision: {{\"type\": \"approve\"}} | {{\"type\": \"edit\", \"edited_action\": {{\"name\": …, \"args\": {{…}}}}}} | {{\"type\": \"reject\", \"message\": …}} | {{\"type\": \"respond\", \"message\": …}}\n",
        approve_all(&d.approvals)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashback_api::ApprovalAction;

    fn approval(id: &str, mode: ApprovalMode, n: usize) -> Approval {
        Approval {
            interrupt_id: Some(id.into()),
            task_id: "t".into(),
            node: "tools".into(),
            mode,
            actions: (0..n)
                .map(|i| ApprovalAction {
                    name: format!("tool{i}"),
                    args: json!({}),
                    description: None,
                    allowed_decisions: vec!["approve".into()],
                    tool_call_id: None,
                })
                .collect(),
            response_schema: None,
        }
    }

    #[test]
    fn approve_all_follows_the_middleware_format() {
        let batched = approve_all(&[approval("i1", ApprovalMode::Batched, 2)]);
        assert_eq!(
            batched,
            json!({"decisions": [{"type": "approve"}, {"type": "approve"}]})
        );
        let per_call = approve_all(&[
            approval("i1", ApprovalMode::PerCall, 1),
            approval("i2", ApprovalMode::PerCall, 1),
        ]);
        assert_eq!(
            per_call,
            json!({"i1": {"type": "approve"}, "i2": {"type": "approve"}})
        );
    }
}
