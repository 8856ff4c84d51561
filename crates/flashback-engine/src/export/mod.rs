//! Audit export: a self-contained, hash-chained bundle of a thread's checkpoints, as JSON or as a
//! standalone HTML report, and its verification.
//!
//! ```text
//!  CheckpointStore ──build_bundle──▶ Bundle ──serde_json──▶ bundle.json ─┐
//!                                      └──────render_html──▶ report.html ─┴─verify──▶ VerifyReport
//! ```
//!
//! # What a bundle holds
//!
//! [`Bundle`] (`"format": "flashback-audit/1"`): when and by which tool it was made, the source
//! backend and schema (never a path, URL or password), the thread, the scope, and one
//! [`BundleCheckpoint`] per exported checkpoint — ids, parent, timestamp, metadata, channel
//! values and pending writes in the JSON view of `docs/json-view.md` — each with a `hash` and a
//! `chain` (and a `problem` when the checkpoint could not be read in full: its values are then
//! empty), then a `bundle_hash` over everything.
//!
//! * **Scope.** [`ExportOptions::checkpoint_id`] `Some(id)`: `"branch"`, the checkpoint and its
//!   ancestors (its lineage to the root, following effective parent links within its own
//!   namespace; subgraph namespaces are not included). The id is looked up in the root namespace
//!   first, then in the other namespaces in order. `None`: `"tree"`, every checkpoint of the
//!   thread in every namespace. `head` is the chosen checkpoint (branch) or the thread head,
//!   `max(checkpoint_id)` of the root namespace (tree).
//! * **Order.** Oldest first along parents: a checkpoint always comes after its parent. Within
//!   that constraint, entries are ordered by `(checkpoint_id, checkpoint_ns)`, so subgraph
//!   checkpoints sit between the parent-graph checkpoints they ran between.
//! * **Secrets.** Values are viewed with secrets masked (`pydantic` `SecretStr`/`SecretBytes`
//!   become `{"$value": "**********", "$secret": true}`); there is no way to reveal them in an
//!   export. Opaque payloads (`pickle` blobs, undecodable values' `raw_base64`) whose bytes
//!   mention `SecretStr`/`SecretBytes`, or contain every literal part of a redaction pattern,
//!   have their base64 replaced by `"[withheld]"` (their bytes could hold the secret in clear).
//! * **Redaction** ([`ExportOptions::redact`]): a pattern is a **case-insensitive glob** matched
//!   against the **whole key**: `*` matches any run of characters (also none), `?` exactly one
//!   character, everything else itself (`api_key` matches `API_KEY` only; `*token*` matches any
//!   key containing `token`). A value under a matching key is replaced by the string
//!   `"[redacted]"` wherever it occurs: metadata keys, channel names (the whole channel value;
//!   a pending write to that channel), dict keys and object fields inside values (messages,
//!   dataclasses, pydantic models…), and the string keys of `{"$type": "builtins.dict",
//!   "$items": [[key, value], …]}` dicts. In values, the view's own markers (`$type`, `$value`,
//!   `$args`, …, any key starting with a single `$`) are never matched; a field the view wrote
//!   as `$$name` is matched as `$name`. The patterns are listed in the bundle's `redactions`.
//!   Redaction happens before hashing, so the hashes cover what was exported.
//!
//! # Hashes
//!
//! * **Canonical form** of a JSON value, as UTF-8 bytes, no whitespace anywhere:
//!   `null`, `true`, `false`; numbers exactly as written in the bundle (the export writes them
//!   as `serde_json` prints them: integers as digits, floats in shortest round-trip form with a
//!   `.` or an exponent, e.g. `1.0`, `1e-7`, `1e+16`); strings in double quotes with `"` → `\"`,
//!   `\` → `\\`, U+0008 → `\b`, U+000C → `\f`, U+000A → `\n`, U+000D → `\r`, U+0009 → `\t`,
//!   every other character below U+0020 → `\u00xx` (lowercase hex), everything else as itself
//!   (raw UTF-8, `/` unescaped); arrays as `[a,b,…]`; objects as `{"k":v,…}` with members
//!   sorted by key in byte order of the keys' UTF-8 (= code point order). Duplicate keys make
//!   a bundle invalid.
//! * `hash` = lowercase hex SHA-256 of the canonical form of the checkpoint entry **without**
//!   its `hash` and `chain` members (every other member is covered, including any extra one).
//! * `chain` = lowercase hex SHA-256 of the 128 ASCII characters `prev + hash`, where `prev` is
//!   the `chain` of the entry's *chain predecessor*, or 64 `0`s when it has none. The chain
//!   predecessor is the **earlier** entry of the bundle with the same `checkpoint_ns` whose
//!   `checkpoint_id` equals this entry's `parent_checkpoint_id`. An entry without one is a
//!   *root of the export*: a root checkpoint, or one whose parent is not in the database (an
//!   orphan). Its parent may legitimately be missing from the bundle; any other entry whose
//!   parent is missing is reported by [`verify`] (the parent was removed from the bundle).
//! * `bundle_hash` = lowercase hex SHA-256 of the canonical form of the whole bundle object
//!   **without** its `bundle_hash` member (so it covers every entry's `hash` and `chain`, the
//!   entries' order and the header fields).
//!
//! The hashes make accidental or naive edits evident; they are not a signature (whoever edits
//! a bundle can recompute them). Keep the `bundle_hash` (or the bundle) somewhere trusted to
//! prove later that a copy is unchanged.
//!
//! # Verification
//!
//! [`verify`] accepts a JSON bundle or an HTML report made by [`render_html`] (whose
//! `<script type="application/json" id="flashback-bundle">` element embeds the bundle). It
//! parses the JSON with its own exact parser (numbers are kept as written), recomputes every
//! `hash`, `chain` link and the `bundle_hash`, and names each checkpoint that was modified
//! (content, `hash` field or `chain` field), removed (a child's parent is missing) or moved
//! before its parent. For an HTML report whose embedded bundle is intact, it also re-renders
//! the report from the embedded bundle and checks that the readable part was not edited. It
//! never panics; unparseable input gives a report with `ok: false` and the reason.

mod bundle;
mod canonical;
mod html;
mod model;
mod parse;
mod redact;
mod verify;

pub use bundle::{build_bundle, build_bundle_observed, seal, ExportProgress};
pub use canonical::ZERO_CHAIN;
pub use html::{render_html, HTML_BUNDLE_ID};
pub use model::{
    Bundle, BundleCheckpoint, BundleWrite, ExportOptions, Scope, SourceInfo, ToolInfo, FORMAT,
};
pub use parse::parse_bundle;
pub use redact::{REDACTED, WITHHELD};
pub use verify::{verify, VerifyReport};
