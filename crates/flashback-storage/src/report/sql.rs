//! The SQL of the storage report, one text per figure for every layout (`docs/storage.md`
//! shows the same queries). Lengths are of the stored bytes: `length(CAST(col AS BLOB))` on
//! SQLite (a text column's bytes, not its characters), `octet_length(col)` on Postgres
//! (`col::text` for a JSONB column: the JSON text Postgres gives back).

/// The layouts Flashback reads (`DevServer`: a `langgraph dev` folder's pickles, measured by
/// `devserver.rs` without SQL; it stores as LangGraph Postgres does: blobs, no inline values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    LanggraphSqlite,
    LanggraphPostgres,
    ThreeSqlite,
    ThreePostgres,
    DevServer,
}

impl Layout {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Layout::LanggraphSqlite => "langgraph-sqlite",
            Layout::LanggraphPostgres => "langgraph-postgres",
            Layout::ThreeSqlite => "three-table-sqlite",
            Layout::ThreePostgres => "three-table-postgres",
            Layout::DevServer => "devserver",
        }
    }

    pub(crate) fn postgres(self) -> bool {
        matches!(self, Layout::LanggraphPostgres | Layout::ThreePostgres)
    }

    pub(crate) fn three(self) -> bool {
        matches!(self, Layout::ThreeSqlite | Layout::ThreePostgres)
    }

    /// The column keying a namespace in every table.
    pub(crate) fn ns(self) -> &'static str {
        if self.three() {
            "checkpoint_ns_hash"
        } else {
            "checkpoint_ns"
        }
    }

    pub(crate) fn blobs(self) -> Option<&'static str> {
        (self != Layout::LanggraphSqlite).then_some("checkpoint_blobs")
    }

    pub(crate) fn writes(self) -> &'static str {
        if self == Layout::LanggraphSqlite {
            "writes"
        } else {
            "checkpoint_writes"
        }
    }

    fn blob_value(self) -> &'static str {
        if self.three() {
            "blob_data"
        } else {
            "blob"
        }
    }

    fn write_value(self) -> &'static str {
        match self {
            Layout::LanggraphSqlite => "value",
            Layout::LanggraphPostgres => "blob",
            _ => "blob_data",
        }
    }

    /// The stored length of `col`.
    fn len(self, col: &str) -> String {
        if self.postgres() {
            format!("octet_length({col})")
        } else {
            format!("length(CAST({col} AS BLOB))")
        }
    }

    pub(crate) fn doc_len(self) -> String {
        self.len(if self == Layout::LanggraphPostgres {
            "checkpoint::text"
        } else {
            "checkpoint"
        })
    }

    pub(crate) fn meta_len(self) -> String {
        self.len(if self.postgres() {
            "metadata::text"
        } else {
            "metadata"
        })
    }

    pub(crate) fn blob_len(self) -> String {
        self.len(self.blob_value())
    }

    pub(crate) fn write_len(self) -> String {
        self.len(self.write_value())
    }

    /// A sum that is 0 over no rows (and a bigint on Postgres).
    fn sum(self, expr: &str) -> String {
        if self.postgres() {
            format!("coalesce(sum({expr}), 0)::int8")
        } else {
            format!("coalesce(sum({expr}), 0)")
        }
    }

    /// The thread parameter.
    pub(crate) fn p1(self) -> &'static str {
        if self.postgres() {
            "$1"
        } else {
            "?1"
        }
    }

    /// `WHERE thread_id = ?1` when one thread is in scope (`and`: the prefix to use).
    fn scope(self, thread: bool, and: &str) -> String {
        self.scope_of(thread, and, "")
    }

    /// [`Layout::scope`] on the `thread_id` of a table alias (`alias`: `"c."`).
    fn scope_of(self, thread: bool, and: &str, alias: &str) -> String {
        if thread {
            format!(" {and} {alias}thread_id = {}", self.p1())
        } else {
            String::new()
        }
    }

    /// `cols` of `table`'s rows in scope, as a source to group: the lengths are taken before
    /// grouping (on SQLite a sort for GROUP BY would otherwise carry the values themselves;
    /// `LIMIT -1` keeps the subquery from being flattened into the grouping query).
    fn source(self, table: &str, cols: &str, thread: bool) -> String {
        let keep = if self.postgres() { "" } else { " LIMIT -1" };
        format!(
            "(SELECT {cols} FROM {table}{}{keep}) AS s",
            self.scope(thread, "WHERE")
        )
    }

    /// Usage grouped by `key` (`thread_id`, or [`Layout::ns`]; `None`: one row of totals),
    /// largest first, at most `top` rows: `key, checkpoints, document bytes, metadata bytes,
    /// blobs, blob bytes, writes, write bytes`.
    pub(crate) fn usage(self, key: Option<&str>, thread: bool, top: u32) -> String {
        let k = key.unwrap_or("''");
        let group = if key.is_some() { " GROUP BY 1" } else { "" };
        let cols = |lens: &str| format!("{k} AS k, {lens}");
        // Totals group nothing: the key is a constant.
        let kk = if key.is_some() { "k" } else { "''" };
        let cp =
            format!(
            "SELECT {kk} AS k, count(*) AS c, {} AS cb, {} AS m, 0 AS b, 0 AS bb, 0 AS w, 0 AS wb \
             FROM {}{group}",
            self.sum("cb"),
            self.sum("m"),
            self.source(
                "checkpoints",
                &cols(&format!("{} AS cb, {} AS m", self.doc_len(), self.meta_len())),
                thread
            )
        );
        let bl = self.blobs().map_or(String::new(), |t| {
            format!(
                " UNION ALL SELECT {kk}, 0, 0, 0, count(*), {}, 0, 0 FROM {}{group}",
                self.sum("n"),
                self.source(t, &cols(&format!("{} AS n", self.blob_len())), thread)
            )
        });
        let wr = format!(
            " UNION ALL SELECT {kk}, 0, 0, 0, 0, 0, count(*), {} FROM {}{group}",
            self.sum("n"),
            self.source(
                self.writes(),
                &cols(&format!("{} AS n", self.write_len())),
                thread
            )
        );
        let (c, cb, m, b, bb, wc, wb) = (
            self.sum("c"),
            self.sum("cb"),
            self.sum("m"),
            self.sum("b"),
            self.sum("bb"),
            self.sum("w"),
            self.sum("wb"),
        );
        let tail = if key.is_some() {
            format!(" GROUP BY k ORDER BY {cb} + {m} + {bb} + {wb} DESC, k LIMIT {top}")
        } else {
            String::new()
        };
        let outer = if key.is_some() { "k" } else { "''" };
        format!("SELECT {outer}, {c}, {cb}, {m}, {b}, {bb}, {wc}, {wb} FROM ({cp}{bl}{wr}) u{tail}")
    }

    /// The next `batch` thread ids after `?1`/`$1` (`first`: from it, so that a thread id
    /// `''` is not skipped) with rows in any table, in order (each table read from its primary
    /// key's index, stopping after `batch` ids).
    pub(crate) fn threads_after(self, batch: u32, first: bool) -> String {
        let p = self.p1();
        let op = if first { ">=" } else { ">" };
        let next = |t: &str| {
            format!(
                "SELECT thread_id FROM (SELECT DISTINCT thread_id FROM {t} WHERE thread_id {op} {p} \
                 ORDER BY thread_id LIMIT {batch}) AS {t}_next"
            )
        };
        let mut parts = vec![next("checkpoints"), next(self.writes())];
        if let Some(t) = self.blobs() {
            parts.push(next(t));
        }
        format!(
            "SELECT thread_id FROM ({}) t ORDER BY thread_id LIMIT {batch}",
            parts.join(" UNION ")
        )
    }

    /// How many threads have rows in scope.
    pub(crate) fn thread_count(self, thread: bool) -> String {
        let w = self.scope(thread, "WHERE");
        let bl = self.blobs().map_or(String::new(), |t| {
            format!(" UNION SELECT thread_id FROM {t}{w}")
        });
        format!(
            "SELECT count(*) FROM (SELECT thread_id FROM checkpoints{w}{bl} \
             UNION SELECT thread_id FROM {}{w}) t",
            self.writes()
        )
    }

    /// `channel, count, bytes` of the blob rows in scope.
    pub(crate) fn blobs_by_channel(self, thread: bool) -> Option<String> {
        let t = self.blobs()?;
        Some(format!(
            "SELECT channel, count(*), {} FROM {} GROUP BY channel",
            self.sum("n"),
            self.source(t, &format!("channel, {} AS n", self.blob_len()), thread)
        ))
    }

    /// `channel, count, bytes` of the writes in scope.
    pub(crate) fn writes_by_channel(self, thread: bool) -> String {
        format!(
            "SELECT channel, count(*), {} FROM {} GROUP BY channel",
            self.sum("n"),
            self.source(
                self.writes(),
                &format!("channel, {} AS n", self.write_len()),
                thread
            )
        )
    }

    /// LangGraph Postgres: `channel, count, bytes` of the JSONB values inline in
    /// `checkpoint -> 'channel_values'`.
    pub(crate) fn inline_by_channel(self, thread: bool) -> Option<String> {
        (self == Layout::LanggraphPostgres).then(|| {
            format!(
                "SELECT e.key, count(*), {} FROM checkpoints c CROSS JOIN LATERAL jsonb_each(\
                 CASE jsonb_typeof(c.checkpoint -> 'channel_values') WHEN 'object' \
                 THEN c.checkpoint -> 'channel_values' ELSE '{{}}'::jsonb END) e{} GROUP BY e.key",
                self.sum("octet_length(e.value::text)"),
                self.scope_of(thread, "WHERE", "c.")
            )
        })
    }

    /// `task_path, count, bytes` of the writes in scope (`has_task_path`: the column exists).
    pub(crate) fn writes_by_task_path(self, thread: bool, has_task_path: bool) -> String {
        let path = if has_task_path { "task_path" } else { "''" };
        format!(
            "SELECT p, count(*), {} FROM {} GROUP BY 1",
            self.sum("n"),
            self.source(
                self.writes(),
                &format!("{path} AS p, {} AS n", self.write_len()),
                thread
            )
        )
    }

    /// The largest writes: `thread, ns key, checkpoint id, channel, task_path, bytes`.
    pub(crate) fn largest_writes(self, thread: bool, has_task_path: bool, top: u32) -> String {
        let path = if has_task_path { "task_path" } else { "''" };
        format!(
            "SELECT thread_id, {}, checkpoint_id, channel, {path}, {} AS n FROM {}{} \
             ORDER BY n DESC, thread_id, checkpoint_id LIMIT {top}",
            self.ns(),
            self.len(self.write_value()),
            self.writes(),
            self.scope(thread, "WHERE")
        )
    }

    /// `count, bytes` of the writes whose checkpoint row is missing.
    pub(crate) fn orphan_writes(self, thread: bool) -> String {
        let ns = self.ns();
        format!(
            "SELECT count(*), {} FROM {} w WHERE NOT EXISTS (SELECT 1 FROM checkpoints c \
             WHERE c.thread_id = w.thread_id AND c.{ns} = w.{ns} \
             AND c.checkpoint_id = w.checkpoint_id){}",
            self.sum(&self.len(&format!("w.{}", self.write_value()))),
            self.writes(),
            self.scope_of(thread, "AND", "w.")
        )
    }

    /// One thread's checkpoints, by namespace key then id: `ns key, ns, id, parent, type,
    /// document (or its length), metadata length`, then for LangGraph Postgres the
    /// `channel_versions` and inline value lengths as JSON arrays of `[key, value]`.
    pub(crate) fn thread_checkpoints(self) -> String {
        let ns = self.ns();
        let p = self.p1();
        let order = format!("ORDER BY {ns}, checkpoint_id");
        match self {
            Layout::LanggraphPostgres => format!(
                "SELECT checkpoint_ns, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
                 {}::int8, {}::int8, \
                 (SELECT json_agg(json_build_array(key, value)) FROM jsonb_each_text(\
                   CASE jsonb_typeof(checkpoint -> 'channel_versions') WHEN 'object' \
                   THEN checkpoint -> 'channel_versions' ELSE '{{}}'::jsonb END))::text, \
                 (SELECT json_agg(json_build_array(key, octet_length(value::text))) FROM jsonb_each(\
                   CASE jsonb_typeof(checkpoint -> 'channel_values') WHEN 'object' \
                   THEN checkpoint -> 'channel_values' ELSE '{{}}'::jsonb END))::text \
                 FROM checkpoints WHERE thread_id = {p} {order}",
                self.doc_len(),
                self.meta_len()
            ),
            _ => format!(
                "SELECT {ns}, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
                 checkpoint, {} FROM checkpoints WHERE thread_id = {p} {order}",
                self.meta_len()
            ),
        }
    }

    /// One thread's blob rows: `ns key, channel, version, bytes, base version`.
    pub(crate) fn thread_blobs(self) -> Option<String> {
        let t = self.blobs()?;
        let base = if self.three() { "base_version" } else { "NULL" };
        Some(format!(
            "SELECT {}, channel, version, {}, {base} FROM {t} WHERE thread_id = {}",
            self.ns(),
            self.blob_len(),
            self.p1()
        ))
    }

    /// One thread's blob values: `ns key, channel, version, type, value`.
    pub(crate) fn thread_blob_values(self) -> Option<String> {
        let t = self.blobs()?;
        Some(format!(
            "SELECT {}, channel, version, type, {} FROM {t} WHERE thread_id = {}",
            self.ns(),
            self.blob_value(),
            self.p1()
        ))
    }

    /// One thread's write values: `ns key, checkpoint id, channel, task path, type, value`.
    pub(crate) fn thread_write_values(self, has_task_path: bool) -> String {
        let path = if has_task_path { "task_path" } else { "''" };
        format!(
            "SELECT {}, checkpoint_id, channel, {path}, type, {} FROM {} WHERE thread_id = {}",
            self.ns(),
            self.write_value(),
            self.writes(),
            self.p1()
        )
    }

    /// One thread's writes per checkpoint: `ns key, checkpoint id, count, bytes`.
    pub(crate) fn thread_writes(self) -> String {
        format!(
            "SELECT {}, checkpoint_id, count(*), {} FROM {} WHERE thread_id = {} GROUP BY 1, 2",
            self.ns(),
            self.sum(&self.write_len()),
            self.writes(),
            self.p1()
        )
    }

    /// The namespace text of a three-table namespace hash.
    pub(crate) fn ns_of_hash(self) -> String {
        format!(
            "SELECT checkpoint_ns FROM checkpoints WHERE checkpoint_ns_hash = {} LIMIT 1",
            self.p1()
        )
    }
}
