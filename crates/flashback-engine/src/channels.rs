//! What kind of channel a name is: LangGraph's control channels versus state channels.

use flashback_codec::reserved::{BRANCH_PREFIX, JOIN_PREFIX, RESERVED_PREFIX};

/// Whether `channel` is one of LangGraph's control channels rather than graph state:
/// reserved names (`__start__`, `__error__`, `__interrupt__`, `__pregel_tasks`, …), branch
/// triggers (`branch:to:node`, `branch:node:cond:target`) and join barriers (`join:…`).
/// The UI hides them by default; merge and rebuild skip them; edits never target them.
pub fn is_control_channel(channel: &str) -> bool {
    channel.starts_with(RESERVED_PREFIX)
        || channel.starts_with(BRANCH_PREFIX)
        || channel.starts_with(JOIN_PREFIX)
}

/// State keys LangChain's agent middleware and deepagents keep for their own bookkeeping
/// (`PrivateStateAttr` / `OmitFromOutput`): state Python shows, not what the agent is about.
const BOOKKEEPING: [&str; 10] = [
    "jump_to",
    "thread_model_call_count",
    "run_model_call_count",
    "thread_tool_call_count",
    "run_tool_call_count",
    "hitl_edited_tool_calls",
    "memory_contents",
    "skills_metadata",
    "skills_load_errors",
    "pinned_skills",
];

/// Whether a channel is shown folded under "internal": a control channel, an agent's
/// bookkeeping key, or a key named private (`_summarization_event`).
pub fn is_internal_channel(channel: &str) -> bool {
    is_control_channel(channel) || channel.starts_with('_') || BOOKKEEPING.contains(&channel)
}

#[cfg(test)]
mod tests {
    use super::{is_control_channel, is_internal_channel};

    #[test]
    fn internal_channels() {
        for c in [
            "__pregel_tasks",
            "branch:to:tools",
            "jump_to",
            "_summarization_event",
            "thread_model_call_count",
        ] {
            assert!(is_internal_channel(c), "{c}");
        }
        for c in ["messages", "todos", "files", "structured_response"] {
            assert!(!is_internal_channel(c), "{c}");
        }
    }

    #[test]
    fn control_channels() {
        for c in [
            "__start__",
            "__pregel_tasks",
            "__error__",
            "branch:to:agent",
            "join:a+b:c",
        ] {
            assert!(is_control_channel(c), "{c}");
        }
        for c in [
            "messages",
            "log",
            "_private",
            "branch",
            "start:agent",
            "a__b",
        ] {
            assert!(!is_control_channel(c), "{c}");
        }
    }
}
