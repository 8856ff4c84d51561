//! What Flashback records a checkpoint it wrote as: `metadata.flashback.action`, read back by
//! the graph to label the branch.

/// The `action` of a checkpoint Flashback wrote (`metadata.flashback.action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A copy of a checkpoint (`copy_fork`).
    CopyFork,
    /// A fork with edited values (`edit_fork`).
    EditFork,
    /// The copy fork a re-run resumes from (`rerun`): the graph labels its branch a re-run.
    Rerun,
    /// A merge of two branches (`merge`).
    Merge,
}

impl Action {
    const ALL: [Action; 4] = [
        Action::CopyFork,
        Action::EditFork,
        Action::Rerun,
        Action::Merge,
    ];

    /// The name stored in the metadata.
    pub const fn as_str(self) -> &'static str {
        match self {
            Action::CopyFork => "copy_fork",
            Action::EditFork => "edit_fork",
            Action::Rerun => "rerun",
            Action::Merge => "merge",
        }
    }

    /// The action a stored name says, `None` for a name Flashback does not write.
    pub fn parse(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::Action;

    #[test]
    fn names_round_trip() {
        for a in Action::ALL {
            assert_eq!(Action::parse(a.as_str()), Some(a));
        }
        assert_eq!(Action::parse("fork"), None);
    }
}
