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

#[cfg(test)]
mod tests {
    use super::is_control_channel;

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
