//! The layout as text, like `git log --graph`.
//!
//! Rows carry only their own line (up to the parent's row), so the lines passing each row are
//! rebuilt while streaming: the open lines by lane, each added at its child's row and closed at
//! its parent's. The text itself is O(rows · width): every line is drawn on every row it passes.

use super::GraphRow;
use crate::dag::EdgeKind;
use std::collections::BTreeMap;

/// A line segment between a row and the row below it.
#[derive(Debug, Clone, Copy)]
struct Segment {
    /// Lane at this row.
    from: usize,
    /// Lane at the next row.
    to: usize,
    kind: EdgeKind,
}

fn vertical(kind: EdgeKind) -> u8 {
    match kind {
        EdgeKind::Parent => b'|',
        EdgeKind::Subgraph => b':',
    }
}

fn put(line: &mut Vec<u8>, col: usize, ch: u8) {
    if line.len() <= col {
        line.resize(col + 1, b' ');
    }
    line[col] = ch;
}

fn finish_line(out: &mut String, line: &[u8], label: Option<&str>) {
    let mut text = String::from_utf8_lossy(line).trim_end().to_owned();
    if let Some(l) = label.filter(|l| !l.is_empty()) {
        text.push(' ');
        text.push_str(l);
    }
    out.push_str(text.trim_end());
    out.push('\n');
}

/// Render a layout as text, like `git log --graph`: `*` is a checkpoint, `|` a parent line,
/// `:` a subgraph attachment line, `/` and `\` lines moving between lanes. Each checkpoint
/// line ends with `label(row)`.
pub fn render_text(rows: &[GraphRow], label: impl Fn(&GraphRow) -> String) -> String {
    let mut out = String::new();
    // Lines open below the current row, by lane: the row each ends at, and its kind.
    let mut open: BTreeMap<usize, (usize, EdgeKind)> = BTreeMap::new();
    let mut incoming: Vec<Segment> = Vec::new();
    let mut edges: Vec<Segment> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if let (Some(p), Some(kind)) = (row.parent_row, row.parent_kind) {
            if p > i {
                open.insert(row.lane, (p, kind));
            }
        }
        // The segments down to the next row: a line ending there bends into its lane.
        let next_lane = rows.get(i + 1).map(|r| r.lane);
        edges.clear();
        edges.extend(open.iter().map(|(&from, &(p, kind))| Segment {
            from,
            to: match next_lane {
                Some(l) if p == i + 1 => l,
                _ => from,
            },
            kind,
        }));
        open.retain(|_, (p, _)| *p != i + 1);

        let mut line = Vec::new();
        for e in &incoming {
            put(&mut line, 2 * e.to, vertical(e.kind));
        }
        for e in &edges {
            if e.from != row.lane {
                put(&mut line, 2 * e.from, vertical(e.kind));
            }
        }
        put(&mut line, 2 * row.lane, b'*');
        finish_line(&mut out, &line, Some(&label(row)));

        let mut pos: Vec<usize> = edges.iter().map(|e| e.from).collect();
        while edges.iter().zip(&pos).any(|(e, &p)| p != e.to) {
            let mut line = Vec::new();
            for (e, p) in edges.iter().zip(pos.iter_mut()) {
                if *p == e.to {
                    put(&mut line, 2 * *p, vertical(e.kind));
                } else if e.to < *p {
                    put(&mut line, 2 * *p - 1, b'/');
                    *p -= 1;
                } else {
                    put(&mut line, 2 * *p + 1, b'\\');
                    *p += 1;
                }
            }
            finish_line(&mut out, &line, None);
        }
        std::mem::swap(&mut incoming, &mut edges);
    }
    out
}
