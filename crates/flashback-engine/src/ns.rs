//! Checkpoint namespace helpers.
//!
//! A namespace is `""` for the root graph, `"<node>:<task_id>"` for a subgraph called by a task,
//! nested levels joined with `|` (`"mid:<id>|inner:<id>"`), a numeric segment for the second and
//! later subgraph calls inside one task (`"mid:<id>|1"`), and task-id-free names for
//! `checkpointer=True` subgraphs (`"persist"`).

/// Namespace separator between nesting levels (`NS_SEP`).
pub const NS_SEP: char = '|';
/// Separator between a node name and its task id (`NS_END`).
pub const NS_END: char = ':';

/// Python's `str.isdigit()` for ASCII: non-empty and all digits (a call-counter segment).
fn is_counter(segment: &str) -> bool {
    !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit())
}

/// The segments that name graph levels: the numeric call-counter segments are dropped.
fn levels(ns: &str) -> impl Iterator<Item = &str> {
    ns.split(NS_SEP).filter(|s| !s.is_empty() && !is_counter(s))
}

/// Nesting depth: 0 for the root namespace, 1 for a top-level subgraph, and so on.
pub fn depth(ns: &str) -> usize {
    if ns.is_empty() {
        0
    } else {
        levels(ns).count()
    }
}

/// The namespace of the graph that spawned `ns`: `ns` with its trailing call-counter
/// segments and then its last segment removed, or `""` for a top-level subgraph.
/// `None` for the root namespace.
pub fn parent_ns(ns: &str) -> Option<String> {
    if ns.is_empty() {
        return None;
    }
    let mut segs: Vec<&str> = ns.split(NS_SEP).collect();
    while segs.len() > 1 && segs.last().is_some_and(|s| is_counter(s)) {
        segs.pop();
    }
    segs.pop();
    Some(segs.join("|"))
}

/// Python's `recast_checkpoint_ns`: task ids and numeric segments removed
/// (`"mid:<id>|1"` → `"mid"`).
pub fn recast(ns: &str) -> String {
    ns.split(NS_SEP)
        .filter(|p| !is_counter(p))
        .map(|p| p.split(NS_END).next().unwrap_or(p))
        .collect::<Vec<_>>()
        .join("|")
}

/// The namespace a task's subgraph would use: `"name:task_id"`, prefixed by `parent|`
/// inside a subgraph.
pub fn task_ns(parent: &str, name: &str, task_id: &str) -> String {
    if parent.is_empty() {
        format!("{name}{NS_END}{task_id}")
    } else {
        format!("{parent}{NS_SEP}{name}{NS_END}{task_id}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_depths_and_recast() {
        assert_eq!(parent_ns(""), None);
        assert_eq!(parent_ns("mid:1").as_deref(), Some(""));
        assert_eq!(parent_ns("persist").as_deref(), Some(""));
        assert_eq!(parent_ns("mid:1|inner:2").as_deref(), Some("mid:1"));
        assert_eq!(parent_ns("mid:1|1").as_deref(), Some(""));
        assert_eq!(parent_ns("mid:1|inner:2|3").as_deref(), Some("mid:1"));
        assert_eq!(depth(""), 0);
        assert_eq!(depth("mid:1|1"), 1);
        assert_eq!(depth("mid:1|inner:2"), 2);
        assert_eq!(recast("mid:1|inner:2|3"), "mid|inner");
        assert_eq!(task_ns("", "a", "t"), "a:t");
        assert_eq!(task_ns("m:x", "a", "t"), "m:x|a:t");
    }
}
