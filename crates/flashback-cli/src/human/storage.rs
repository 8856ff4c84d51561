//! `flashback storage`: the storage report as tables for people.

use super::{clip, n, ns_label, table};
use flashback_api::storage_report::*;

use flashback_api::units::bytes as size;

fn tally(t: &Tally) -> String {
    if t.count == 0 {
        "-".into()
    } else {
        format!("{} ({})", size(t.bytes), t.count)
    }
}

fn usage_row(key: String, u: &Usage) -> Vec<String> {
    vec![
        key,
        size(u.total_bytes),
        tally(&u.checkpoints),
        size(u.metadata_bytes),
        tally(&u.blobs),
        tally(&u.writes),
    ]
}

const USAGE: [&str; 6] = [
    "",
    "TOTAL",
    "DOCUMENTS (N)",
    "METADATA",
    "BLOBS (N)",
    "WRITES (N)",
];

fn section(out: &mut String, title: &str, headers: &[&str], rows: &[Vec<String>]) {
    if rows.is_empty() {
        return;
    }
    out.push('\n');
    out.push_str(title);
    out.push('\n');
    out.push_str(&table(headers, rows));
}

fn keyed(out: &mut String, title: &str, first: &str, rows: &[KeyedUsage], ns: bool) {
    let mut headers = USAGE;
    headers[0] = first;
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|k| {
            let key = if ns { ns_label(&k.key) } else { k.key.clone() };
            usage_row(clip(&key, 40), &k.usage)
        })
        .collect();
    section(out, title, &headers, &rows);
}

/// The report: totals, then each list.
pub fn storage(r: &StorageReport) -> String {
    let scope = match &r.thread_id {
        Some(t) => format!("thread {t}"),
        None => n(r.thread_count, "thread"),
    };
    let mut out = format!(
        "{scope}: {} as stored ({}; {})\n",
        size(r.totals.total_bytes),
        r.layout,
        r.schema
    );
    out.push_str(&table(&USAGE, &[usage_row("all".into(), &r.totals)]));
    if r.thread_id.is_none() {
        keyed(&mut out, "largest threads", "THREAD", &r.by_thread, false);
    }
    keyed(
        &mut out,
        "largest namespaces",
        "NAMESPACE",
        &r.by_namespace,
        true,
    );
    let channels: Vec<Vec<String>> = r
        .by_channel
        .iter()
        .map(|c| {
            vec![
                clip(&c.channel, 40),
                tally(&c.inline),
                tally(&c.blobs),
                tally(&c.writes),
            ]
        })
        .collect();
    section(
        &mut out,
        "by channel",
        &["CHANNEL", "INLINE (N)", "BLOBS (N)", "WRITES (N)"],
        &channels,
    );
    let nodes: Vec<Vec<String>> = r
        .by_node
        .iter()
        .map(|n| vec![clip(&ns_label(&n.node), 40), tally(&n.writes)])
        .collect();
    section(&mut out, "writes by node", &["NODE", "WRITES (N)"], &nodes);
    let sizes = |list: &[CheckpointSize]| -> Vec<Vec<String>> {
        list.iter()
            .map(|c| {
                vec![
                    clip(&c.thread_id, 24),
                    clip(&ns_label(&c.checkpoint_ns), 24),
                    super::short_id(&c.checkpoint_id),
                    size(c.total_bytes),
                    size(c.document_bytes),
                    tally(&c.blobs),
                    tally(&c.writes),
                ]
            })
            .collect()
    };
    let headers = [
        "THREAD",
        "NS",
        "CHECKPOINT",
        "TOTAL",
        "DOCUMENT",
        "BLOBS",
        "WRITES",
    ];
    section(&mut out, "size per checkpoint", &headers, &sizes(&r.growth));
    section(
        &mut out,
        "largest checkpoints",
        &headers,
        &sizes(&r.largest_checkpoints),
    );
    let values: Vec<Vec<String>> = r
        .largest_values
        .iter()
        .map(|v| {
            vec![
                clip(&v.thread_id, 24),
                clip(&ns_label(&v.checkpoint_ns), 24),
                v.checkpoint_id
                    .as_deref()
                    .map_or_else(|| "-".into(), super::short_id),
                clip(&v.channel, 24),
                super::wire_name(&v.kind),
                size(v.bytes),
            ]
        })
        .collect();
    section(
        &mut out,
        "largest values",
        &["THREAD", "NS", "CHECKPOINT", "CHANNEL", "KIND", "BYTES"],
        &values,
    );
    let growing: Vec<Vec<String>> = r
        .quadratic
        .iter()
        .map(|q| {
            vec![
                clip(&q.thread_id, 24),
                clip(&ns_label(&q.checkpoint_ns), 24),
                clip(&q.channel, 24),
                q.stores.to_string(),
                size(q.stored_bytes),
                size(q.last_bytes),
            ]
        })
        .collect();
    section(
        &mut out,
        "! stored whole again at every step, growing (quadratic)",
        &["THREAD", "NS", "CHANNEL", "STORES", "STORED", "LAST"],
        &growing,
    );
    payloads(&mut out, r);
    out.push('\n');
    out.push_str(&format!(
        "orphaned writes (no checkpoint row): {}\norphaned blobs (no checkpoint names them): {}\n",
        tally(&r.orphans.writes),
        tally(&r.orphans.blobs)
    ));
    if let Some(f) = &r.space.sqlite {
        out.push_str(&format!(
            "file: {} pages of {} B; VACUUM would return {} free pages ({})\n",
            f.page_count,
            f.page_size,
            f.free_pages,
            size(f.free_bytes)
        ));
    }
    let relations: Vec<Vec<String>> = r
        .space
        .relations
        .iter()
        .map(|t| {
            vec![
                t.table.clone(),
                size(t.total_bytes),
                size(t.table_bytes),
                size(t.toast_bytes),
                size(t.index_bytes),
            ]
        })
        .collect();
    section(
        &mut out,
        "tables on disk",
        &["TABLE", "TOTAL", "TABLE", "TOAST", "INDEXES"],
        &relations,
    );
    let files: Vec<Vec<String>> = r
        .space
        .files
        .iter()
        .map(|f| vec![f.file.clone(), size(f.bytes)])
        .collect();
    section(&mut out, "files on disk", &["FILE", "BYTES"], &files);
    if r.unmeasured.count > 0 {
        out.push_str(&format!(
            "! {} checkpoint documents (or a dev folder's files) could not be measured inside (their bytes are counted):\n",
            r.unmeasured.count
        ));
        for e in &r.unmeasured.examples {
            out.push_str(&format!("  {e}\n"));
        }
    }
    out
}

fn place(p: &PayloadPlace) -> String {
    let at = match p.path.chars().next() {
        None => p.channel.clone(),
        Some('[') => format!("{}{}", p.channel, p.path),
        Some(_) => format!("{}.{}", p.channel, p.path),
    };
    format!(
        "{} {} {}",
        clip(&p.thread_id, 24),
        p.checkpoint_id
            .as_deref()
            .map_or_else(|| "-".into(), super::short_id),
        clip(&at, 48)
    )
}

fn repeats(t: &RepeatTotals) -> String {
    format!(
        "{} stored in {} copies ({}); storing each once saves {}",
        t.payloads,
        t.copies,
        size(t.stored_bytes),
        size(t.saved_bytes)
    )
}

/// Repeated payloads, files in values, Sends.
fn payloads(out: &mut String, r: &StorageReport) {
    let d = &r.duplicates;
    out.push_str(&format!(
        "\nrepeated payloads of {} or more{}\n  whole values: {}\n  strings inside values: {}\n",
        size(d.min_bytes),
        if d.approximate {
            " (a lower bound: too many to remember them all)"
        } else {
            ""
        },
        repeats(&d.values),
        repeats(&d.strings)
    ));
    let rows: Vec<Vec<String>> = d
        .largest
        .iter()
        .map(|p| {
            vec![
                super::wire_name(&p.payload),
                size(p.bytes),
                p.copies.to_string(),
                size(p.saved_bytes),
                place(&p.place),
                clip(&p.preview, 40),
            ]
        })
        .collect();
    section(
        out,
        "largest repeats",
        &["KIND", "SIZE", "COPIES", "SAVED", "WHERE", "PREVIEW"],
        &rows,
    );
    let f = &r.embedded_files;
    if f.total.count > 0 {
        let rows: Vec<Vec<String>> = f
            .by_type
            .iter()
            .map(|t| vec![t.media_type.clone(), t.count.to_string(), size(t.bytes)])
            .collect();
        section(
            out,
            &format!("files stored as base64 text: {}", tally(&f.total)),
            &["TYPE", "COPIES", "BYTES"],
            &rows,
        );
        let rows: Vec<Vec<String>> = f
            .largest
            .iter()
            .map(|e| {
                vec![
                    e.media_type.clone(),
                    size(e.decoded_bytes),
                    size(e.bytes),
                    e.copies.to_string(),
                    if e.data_url { "data URL" } else { "base64" }.into(),
                    place(&e.place),
                ]
            })
            .collect();
        section(
            out,
            "largest files",
            &["TYPE", "FILE", "TEXT", "COPIES", "FORM", "WHERE"],
            &rows,
        );
    }
    let s = &r.sends;
    if s.writes.count + s.stored.count > 0 {
        let rows: Vec<Vec<String>> = s
            .by_node
            .iter()
            .map(|n| vec![clip(&n.node, 40), tally(&n.writes), tally(&n.stored)])
            .collect();
        section(
            out,
            &format!(
                "Send payloads (__pregel_tasks): writes {}, stored {}",
                tally(&s.writes),
                tally(&s.stored)
            ),
            &["NODE", "WRITES (N)", "STORED (N)"],
            &rows,
        );
    }
}
