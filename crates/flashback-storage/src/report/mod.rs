//! The storage report (`flashback storage`, `docs/storage.md`): where the bytes of a
//! checkpoint database — or of one thread — are, counted as stored, on every layout Flashback
//! reads. It opens its own read-only connection and reads in one snapshot (a read
//! transaction, rolled back at the end); it never writes.
//!
//! ```text
//!  SQL aggregates (sql.rs)       totals, by thread / namespace / channel / node, the largest
//!                                writes, orphaned writes
//!  one thread at a time (pass.rs) its blob keys, its writes per checkpoint, then its
//!                                checkpoints in order (LangGraph SQLite: each document's
//!                                values measured inside it, doc.rs; JSON ones, json.rs)
//!                                → sizes, growth flags,
//!                                the largest checkpoints and values, orphaned blobs
//!  the files                     SQLite free pages; Postgres relation sizes
//! ```
//!
//! A `langgraph dev` folder (devserver.rs) has no SQL: its pickles are read in one snapshot,
//! summed in memory to the same figures, and each thread fed to the same pass and scanners.

mod devserver;
mod doc;
mod embedded;
mod json;
pub mod model;
mod pass;
mod payload;
#[cfg(feature = "postgres")]
mod postgres;
mod send;
mod sql;
mod sqlite;

pub use model::*;

use crate::model::{Backend, SchemaInfo};
use crate::StoreError;
use async_trait::async_trait;
use pass::{Acc, BlobRow, ThreadPass};
use payload::{At, Payloads};
use sql::Layout;
use std::collections::HashMap;
use std::sync::Arc;

/// Threads read per query of the thread list.
const THREAD_BATCH: u32 = 500;

/// Where a long report says how far it is, and learns that it should stop.
pub trait Progress: Send + Sync {
    /// `done` of `total` threads measured.
    fn step(&self, done: u64, total: u64, label: &str);
    /// Stop at the next thread.
    fn cancelled(&self) -> bool;
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct Scope {
    /// One thread (all its namespaces), or `None`: the whole database.
    pub thread_id: Option<String>,
    /// How many rows the lists keep.
    pub top: u32,
}

/// The error a cancelled report returns.
pub const CANCELLED: &str = "the storage report was cancelled";

/// Measure the database at `location` (as opened: `schema` is what was detected).
pub async fn measure(
    location: &str,
    schema: &SchemaInfo,
    scope: Scope,
    progress: Arc<dyn Progress>,
) -> Result<StorageReport, StoreError> {
    let three = schema.layout().is_three_table();
    let layout =
        match (schema.backend, three) {
            (Backend::Sqlite, false) => Layout::LanggraphSqlite,
            (Backend::Sqlite, true) => Layout::ThreeSqlite,
            (Backend::Postgres, false) => Layout::LanggraphPostgres,
            (Backend::Postgres, true) => Layout::ThreePostgres,
            (Backend::DevServer, _) => Layout::DevServer,
            (Backend::AgentServer, _) => return Err(StoreError::InvalidInput(
                "the storage report measures a database's tables or a folder's files; an Agent \
                 Server's API does not show how it stores them (keep a snapshot with `flashback \
                 convert` and measure that)"
                    .into(),
            )),
        };
    if !schema.holds.checkpoints() {
        return Err(StoreError::InvalidInput(
            "this database holds no checkpoints (only LangGraph's memory store): the storage \
             report measures checkpoint tables"
                .into(),
        ));
    }
    if schema.shallow() {
        return Err(StoreError::InvalidInput(
            "the storage report does not read the shallow Postgres saver's layout".into(),
        ));
    }
    if layout == Layout::DevServer {
        return devserver::measure(location, schema, scope, progress).await;
    }
    let job = Job {
        layout,
        schema: schema.clone(),
        scope,
        progress,
    };
    if layout.postgres() {
        #[cfg(feature = "postgres")]
        {
            let mut reader = postgres::PgReader::open(location).await?;
            let out = job.run(&mut reader).await;
            reader.close().await;
            return out;
        }
        #[cfg(not(feature = "postgres"))]
        return Err(StoreError::InvalidInput(
            "this build of Flashback has no Postgres support (feature `postgres`)".into(),
        ));
    }
    let location = location.to_owned();
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let mut reader = sqlite::SqliteReader::open(&location)?;
        let out = handle.block_on(job.run(&mut reader));
        reader.close();
        out
    })
    .await
    .map_err(|e| StoreError::Query(format!("storage report task failed: {e}")))?
}

/// A cell of a result row.
#[derive(Debug, Clone)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
}

impl Cell {
    fn int(&self) -> u64 {
        match self {
            Cell::Int(i) => u64::try_from(*i).unwrap_or(0),
            Cell::Text(t) => t.parse().unwrap_or(0),
            _ => 0,
        }
    }

    fn text(&self) -> String {
        match self {
            Cell::Text(t) => t.clone(),
            Cell::Int(i) => i.to_string(),
            Cell::Bytes(b) => crate::escape::escape_bytes(b),
            Cell::Null => String::new(),
        }
    }

    fn opt_text(&self) -> Option<String> {
        match self {
            Cell::Null => None,
            c => Some(c.text()),
        }
    }
}

/// A backend's read snapshot.
#[async_trait]
pub(crate) trait Reader: Send {
    /// Run `sql` (with the thread as its one parameter when given), row by row.
    async fn each(
        &mut self,
        sql: &str,
        param: Option<&str>,
        f: &mut (dyn for<'r> FnMut(&'r [Cell]) + Send),
    ) -> Result<(), StoreError>;

    /// The file's pages (SQLite) or the tables' sizes (Postgres).
    async fn space(&mut self) -> Result<Space, StoreError>;

    /// Every row of `sql`.
    async fn rows(&mut self, sql: &str, param: Option<&str>) -> Result<Vec<Vec<Cell>>, StoreError> {
        let mut out = Vec::new();
        self.each(sql, param, &mut |r| out.push(r.to_vec())).await?;
        Ok(out)
    }
}

struct Job {
    layout: Layout,
    schema: SchemaInfo,
    scope: Scope,
    progress: Arc<dyn Progress>,
}

fn usage_of(r: &[Cell]) -> Usage {
    let n = |i: usize| r.get(i).map_or(0, Cell::int);
    Usage {
        checkpoints: Tally {
            count: n(1),
            bytes: n(2),
        },
        metadata_bytes: n(3),
        blobs: Tally {
            count: n(4),
            bytes: n(5),
        },
        writes: Tally {
            count: n(6),
            bytes: n(7),
        },
        total_bytes: 0,
    }
    .totalled()
}

fn tally(r: &[Cell]) -> Tally {
    Tally {
        count: r.get(1).map_or(0, Cell::int),
        bytes: r.get(2).map_or(0, Cell::int),
    }
}

impl Job {
    async fn run(self, db: &mut dyn Reader) -> Result<StorageReport, StoreError> {
        let l = self.layout;
        let thread = self.scope.thread_id.clone();
        let (one, p) = (thread.is_some(), thread.as_deref());
        let top = self.scope.top;
        let totals = db
            .rows(&l.usage(None, one, top), p)
            .await?
            .first()
            .map(|r| usage_of(r))
            .unwrap_or_default();
        let thread_count = db
            .rows(&l.thread_count(one), p)
            .await?
            .first()
            .and_then(|r| r.first())
            .map_or(0, Cell::int);
        if let Some(t) = &thread {
            if thread_count == 0 {
                return Err(StoreError::NotFound(format!(
                    "no thread {t:?} in the database"
                )));
            }
        }
        let by_thread = keyed(db.rows(&l.usage(Some("thread_id"), one, top), p).await?);
        let mut by_namespace = keyed(db.rows(&l.usage(Some(l.ns()), one, top), p).await?);
        if l.three() {
            for n in &mut by_namespace {
                if let Some(r) = db.rows(&l.ns_of_hash(), Some(&n.key)).await?.first() {
                    n.key = r[0].text();
                }
            }
        }
        let has_path = self.schema.has_task_path || l.three();
        let mut by_node: HashMap<String, Tally> = HashMap::new();
        for r in db.rows(&l.writes_by_task_path(one, has_path), p).await? {
            let t = by_node.entry(pass::node_of(&r[0].text())).or_default();
            let add = tally(&r);
            t.count += add.count;
            t.bytes += add.bytes;
        }
        let mut largest_writes = Vec::new();
        for r in db.rows(&l.largest_writes(one, has_path, top), p).await? {
            largest_writes.push(ValueSize {
                kind: ValueKind::Write,
                thread_id: r[0].text(),
                checkpoint_ns: r[1].text(),
                checkpoint_id: r[2].opt_text(),
                channel: r[3].text(),
                version: None,
                task_path: Some(r[4].text()),
                bytes: r[5].int(),
            });
        }
        let orphan_writes = db
            .rows(&l.orphan_writes(one), p)
            .await?
            .first()
            .map(|r| Tally {
                count: r[0].int(),
                bytes: r[1].int(),
            })
            .unwrap_or_default();

        let mut acc = Acc::new(l, one, top);
        let mut payloads = Payloads::new(top);
        match &thread {
            Some(t) => {
                self.progress.step(0, 1, &format!("thread {t}"));
                self.thread(db, &mut acc, &mut payloads, t).await?;
                self.progress.step(1, 1, "done");
            }
            None => {
                self.every_thread(db, &mut acc, &mut payloads, thread_count)
                    .await?
            }
        }
        let mut channels: HashMap<String, ChannelUsage> = HashMap::new();
        if let Some(sql) = l.blobs_by_channel(one) {
            for r in db.rows(&sql, p).await? {
                entry(&mut channels, r[0].text()).blobs = tally(&r);
            }
        }
        if let Some(sql) = l.inline_by_channel(one) {
            for r in db.rows(&sql, p).await? {
                entry(&mut channels, r[0].text()).inline = tally(&r);
            }
        }
        for r in db.rows(&l.writes_by_channel(one), p).await? {
            entry(&mut channels, r[0].text()).writes = tally(&r);
        }
        let gathered = Gathered {
            thread,
            totals,
            thread_count,
            by_thread,
            by_namespace,
            channels,
            by_node,
            largest_writes,
            orphan_writes,
            space: db.space().await?,
        };
        let mut report = gathered.assemble(acc, payloads, &self.schema.description, l, top);
        if l.three() {
            // Writes carry the namespace's hash; name it as the checkpoints do.
            for v in report
                .largest_values
                .iter_mut()
                .filter(|v| v.kind == ValueKind::Write)
            {
                if let Some(r) = db
                    .rows(&l.ns_of_hash(), Some(&v.checkpoint_ns))
                    .await?
                    .first()
                {
                    v.checkpoint_ns = r[0].text();
                }
            }
        }
        Ok(report)
    }

    async fn every_thread(
        &self,
        db: &mut dyn Reader,
        acc: &mut Acc,
        payloads: &mut Payloads,
        total: u64,
    ) -> Result<(), StoreError> {
        let mut after = String::new();
        let mut done = 0u64;
        loop {
            let sql = self.layout.threads_after(THREAD_BATCH, done == 0);
            let batch = db.rows(&sql, Some(&after)).await?;
            let Some(last) = batch.last() else {
                break;
            };
            after = last[0].text();
            for r in batch {
                if self.progress.cancelled() {
                    return Err(StoreError::Query(CANCELLED.into()));
                }
                let t = r[0].text();
                self.progress.step(done, total, &format!("thread {t}"));
                self.thread(db, acc, payloads, &t).await?;
                done += 1;
            }
        }
        self.progress.step(done, total, "done");
        Ok(())
    }

    /// One thread's pass (see `pass.rs`), then its values (`payload.rs`).
    async fn thread(
        &self,
        db: &mut dyn Reader,
        acc: &mut Acc,
        payloads: &mut Payloads,
        t: &str,
    ) -> Result<(), StoreError> {
        let l = self.layout;
        let mut blobs = Vec::new();
        if let Some(sql) = l.thread_blobs() {
            db.each(&sql, Some(t), &mut |r| {
                blobs.push(BlobRow {
                    ns_key: r[0].text(),
                    channel: r[1].text(),
                    version: r[2].text(),
                    bytes: r[3].int(),
                    base: r[4].opt_text(),
                });
            })
            .await?;
        }
        let writes = db
            .rows(&l.thread_writes(), Some(t))
            .await?
            .into_iter()
            .map(|r| {
                let t = Tally {
                    count: r[2].int(),
                    bytes: r[3].int(),
                };
                (r[0].text(), r[1].text(), t)
            })
            .collect();
        let mut pass = ThreadPass::new(acc, t, blobs, writes);
        db.each(&l.thread_checkpoints(), Some(t), &mut |r| {
            pass.checkpoint(doc::checkpoint_row(
                l,
                r,
                &mut |ns, id, channel, tag, value| {
                    let at = At {
                        kind: ValueKind::Inline,
                        thread: t,
                        ns,
                        checkpoint: Some(id),
                        channel,
                        task_path: None,
                    };
                    payloads.value(&at, tag, value);
                },
            ));
        })
        .await?;
        let placed = pass.finish();
        let ns_of = |key: &str| placed.names.get(key).map_or(key, String::as_str).to_owned();
        if let Some(sql) = l.thread_blob_values() {
            db.each(&sql, Some(t), &mut |r| {
                let key = (r[0].text(), r[1].text(), r[2].text());
                let ns = ns_of(&key.0);
                let at = At {
                    kind: ValueKind::Blob,
                    thread: t,
                    ns: &ns,
                    checkpoint: placed.first.get(&key).map(String::as_str),
                    channel: &key.1,
                    task_path: None,
                };
                if let Cell::Bytes(b) = &r[4] {
                    payloads.value(&at, &r[3].text(), b);
                }
            })
            .await?;
        }
        let has_path = self.schema.has_task_path || l.three();
        db.each(&l.thread_write_values(has_path), Some(t), &mut |r| {
            let (ns, id, channel, path) =
                (ns_of(&r[0].text()), r[1].text(), r[2].text(), r[3].text());
            let at = At {
                kind: ValueKind::Write,
                thread: t,
                ns: &ns,
                checkpoint: Some(&id),
                channel: &channel,
                task_path: Some(&path),
            };
            if let Cell::Bytes(b) = &r[5] {
                payloads.value(&at, &r[4].text(), b);
            }
        })
        .await?;
        Ok(())
    }
}

/// The figures a measure gathers (SQL aggregates, or a dev folder's sums), before the lists
/// are sorted and cut.
struct Gathered {
    thread: Option<String>,
    totals: Usage,
    thread_count: u64,
    by_thread: Vec<KeyedUsage>,
    by_namespace: Vec<KeyedUsage>,
    /// Blobs, writes (and LangGraph Postgres' inline values) by channel.
    channels: HashMap<String, ChannelUsage>,
    /// Writes by node.
    by_node: HashMap<String, Tally>,
    largest_writes: Vec<ValueSize>,
    orphan_writes: Tally,
    space: Space,
}

impl Gathered {
    /// The report: the passes' figures added, the lists sorted largest first and cut.
    fn assemble(
        mut self,
        mut acc: Acc,
        payloads: Payloads,
        schema: &str,
        l: Layout,
        top: u32,
    ) -> StorageReport {
        let (duplicates, embedded_files, sends) = payloads.finish(top);
        for (name, t) in std::mem::take(&mut acc.inline) {
            entry(&mut self.channels, name).inline = t;
        }
        let mut by_channel: Vec<ChannelUsage> = self.channels.into_values().collect();
        by_channel.sort_by(|a, b| {
            let size = |c: &ChannelUsage| c.inline.bytes + c.blobs.bytes + c.writes.bytes;
            (size(b), &a.channel).cmp(&(size(a), &b.channel))
        });
        let mut by_node: Vec<NodeUsage> = self
            .by_node
            .into_iter()
            .map(|(node, writes)| NodeUsage { node, writes })
            .collect();
        by_node.sort_by(|a, b| (b.writes.bytes, &a.node).cmp(&(a.writes.bytes, &b.node)));
        by_channel.truncate(top as usize);
        by_node.truncate(top as usize);

        let mut largest_values = acc.largest_values.into_vec();
        largest_values.extend(self.largest_writes);
        largest_values.sort_by_key(|v| std::cmp::Reverse(v.bytes));
        largest_values.truncate(top as usize);
        StorageReport {
            thread_id: self.thread,
            schema: schema.to_owned(),
            layout: l.name().to_owned(),
            top,
            totals: self.totals,
            thread_count: self.thread_count,
            by_thread: self.by_thread,
            by_namespace: self.by_namespace,
            by_channel,
            by_node,
            growth: acc.growth,
            quadratic: acc.quadratic.into_vec(),
            largest_checkpoints: acc.largest_checkpoints.into_vec(),
            largest_values,
            duplicates,
            embedded_files,
            sends,
            orphans: Orphans {
                writes: self.orphan_writes,
                blobs: acc.orphan_blobs,
            },
            space: self.space,
            unmeasured: acc.unmeasured,
        }
    }
}

fn entry(channels: &mut HashMap<String, ChannelUsage>, name: String) -> &mut ChannelUsage {
    channels
        .entry(name.clone())
        .or_insert_with(|| ChannelUsage {
            channel: name,
            ..Default::default()
        })
}

fn keyed(rows: Vec<Vec<Cell>>) -> Vec<KeyedUsage> {
    rows.iter()
        .map(|r| KeyedUsage {
            key: r[0].text(),
            usage: usage_of(r),
        })
        .collect()
}
