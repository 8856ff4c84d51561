//! `flashback search`: one line per match — thread, short checkpoint id, path, and the text
//! around the hit — fitted to [`WIDTH`] columns, printed as the matches are found.

use super::lists::short_id;
use super::{clip, WIDTH};
use flashback_api::{snippet_around, JobEvent, ValueSearchSummary};

/// Columns: thread, checkpoint, path (at least; a longer path takes from the snippet).
const THREAD: usize = 20;
const CHECKPOINT: usize = 14;
const PATH: usize = 24;
/// The most a path takes.
const PATH_MAX: usize = 40;

fn pad(text: &str, width: usize) -> String {
    format!("{:<width$}", clip(text, width))
}

/// The column headings, printed before the first match.
pub fn search_header() -> String {
    format!(
        "{}  {}  {}  MATCH\n",
        pad("THREAD", THREAD),
        pad("CHECKPOINT", CHECKPOINT),
        pad("PATH", PATH)
    )
}

/// The lines of one matching thread (`query`: to keep the hit in view when a snippet is cut).
pub fn search_hit(e: &JobEvent, query: &str) -> String {
    let JobEvent::SearchHit {
        thread_id,
        checkpoint_id,
        matches,
        more,
    } = e
    else {
        return String::new();
    };
    let mut out = String::new();
    let head = format!(
        "{}  {}  ",
        pad(thread_id, THREAD),
        pad(&short_id(checkpoint_id), CHECKPOINT)
    );
    for m in matches {
        let path = clip(&m.path, PATH_MAX);
        let path = format!("{path:<PATH$}");
        let used = THREAD + CHECKPOINT + path.chars().count() + 6;
        let snippet = snippet_around(&m.snippet, query, WIDTH.saturating_sub(used).max(8));
        out.push_str(format!("{head}{path}  {snippet}").trim_end());
        out.push('\n');
    }
    if *more {
        out.push_str(&format!(
            "{head}(more matches: open the thread and search its state)\n"
        ));
    }
    out
}

/// The last lines: how many threads matched, and what was not searched.
pub fn searched(s: &ValueSearchSummary, query: &str) -> String {
    let plural = |n: u32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut out = if s.threads_matched == 0 {
        format!(
            "no thread's latest state holds {query:?} ({} searched)\n",
            plural(s.threads_searched, "thread", "threads")
        )
    } else {
        format!(
            "{} {query:?} ({} searched)\n",
            plural(s.threads_matched, "thread holds", "threads hold"),
            plural(s.threads_searched, "thread", "threads")
        )
    };
    if s.truncated {
        out.push_str(&format!(
            "stopped at the limit: {} of {} threads not searched (raise --limit)\n",
            s.threads_total - s.threads_searched,
            s.threads_total
        ));
    }
    if s.threads_locked > 0 {
        out.push_str(&format!(
            "{} values locked (encrypted; set LANGGRAPH_AES_KEY to search them)\n",
            plural(s.threads_locked, "thread has", "threads have")
        ));
    }
    if s.threads_unreadable > 0 {
        out.push_str(&format!(
            "{} skipped: the latest checkpoint cannot be read\n",
            plural(s.threads_unreadable, "thread", "threads")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashback_api::ValueHit;

    #[test]
    fn lines_fit_and_keep_the_hit_in_view() {
        let e = JobEvent::SearchHit {
            thread_id: "a-rather-long-thread-identifier-42".into(),
            checkpoint_id: "1f1e953f-7f9a-6f8b-8002-3e7c14c2fed3".into(),
            matches: vec![
                ValueHit {
                    path: "messages[12].content".into(),
                    snippet: format!("{} the NEEDLE is here {}", "x".repeat(50), "y".repeat(50)),
                },
                ValueHit {
                    path: "plan.steps[0].a_very_long_field_name.and_another_one.x".into(),
                    snippet: "needle".into(),
                },
            ],
            more: true,
        };
        let text = search_hit(&e, "needle");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        for l in &lines {
            assert!(l.chars().count() <= WIDTH, "{l}");
        }
        assert!(lines[0].starts_with("a-rather-long-threa…  7f9a-6f8b-3e7c  messages[12].content"));
        assert!(lines[0].contains("NEEDLE"), "{}", lines[0]);
        assert!(lines[1].ends_with("needle"), "{}", lines[1]);
        assert!(lines[2].contains("more matches"));
        assert!(search_header().starts_with("THREAD "));
    }

    #[test]
    fn the_summary_says_what_was_not_searched() {
        let s = ValueSearchSummary {
            threads_total: 500,
            threads_searched: 300,
            threads_matched: 200,
            truncated: true,
            threads_locked: 1,
            threads_unreadable: 2,
        };
        let text = searched(&s, "x");
        assert!(
            text.contains("200 threads hold \"x\" (300 threads searched)"),
            "{text}"
        );
        assert!(text.contains("200 of 500 threads not searched"), "{text}");
        assert!(text.contains("1 thread has values locked"), "{text}");
        assert!(text.contains("2 threads skipped"), "{text}");
    }
}
