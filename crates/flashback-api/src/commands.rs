//! Every command, declared once.
//!
//! [`for_each_command!`](crate::for_each_command) holds the one table of commands: name,
//! request type, response type and the doc line. It hands the table to a macro of the caller's
//! choosing, and each door derives what it needs from it:
//!
//! * here: [`COMMANDS`] (the names, which are also the HTTP paths `/api/<name>`) and
//!   [`Api::dispatch`](crate::Api::dispatch) (what `flashback serve` calls);
//! * `src-tauri`: one `#[tauri::command]` per entry and the specta builder that generates the
//!   TypeScript bindings;
//! * the CLI calls the same `Api` methods by name (see `crates/flashback-cli/src/doors.rs`).
//!
//! Adding a command: write the `Api` method (in `connections`, `reads`, `writes`, `store`,
//! `jobs` or `settings`), then add its line below. Nothing else lists commands.

/// Calls `$callback! { … }` with the command table: entries
/// `#[doc = …] name(RequestType) -> ResponseType;` (the request is absent for commands that
/// take none). The types are paths into `flashback_api`, so the table works from any crate.
#[macro_export]
macro_rules! for_each_command {
    ($callback:ident) => {
        $callback! {
            /// Version, host, keyring, settings and the database to show first.
            app_info() -> $crate::AppInfo;
            /// Open a SQLite file or a Postgres URL (read-only: nothing is written to it).
            open_database($crate::OpenRequest) -> $crate::DbInfo;
            /// Open the built-in demo database (a private copy).
            open_demo($crate::DemoRequest) -> $crate::DbInfo;
            /// Reopen a remembered connection.
            open_recent($crate::OpenRecentRequest) -> $crate::DbInfo;
            /// Remembered connections, most recent first.
            recent_connections() -> Vec<$crate::RecentConnection>;
            /// Forget a remembered connection and its saved password.
            forget_connection($crate::ConnectionId) -> ();
            /// Unlock an encrypted database with its AES key (checked first; kept in memory, or
            /// in the OS keyring when asked).
            unlock_database($crate::UnlockRequest) -> $crate::DbInfo;
            /// Close a database handle.
            close_database($crate::DbRequest) -> ();
            /// Every thread with its status; or the threads found by metadata, time and status.
            list_threads($crate::ThreadsRequest) -> Vec<$crate::ThreadSummary>;
            /// The metadata keys of the newest checkpoints, with their common values (sampled).
            metadata_keys($crate::MetadataKeysRequest) -> Vec<$crate::MetadataKey>;
            /// What the threads' histories say beyond their latest checkpoints (retried errors).
            thread_activity($crate::ThreadActivityRequest) -> Vec<$crate::ThreadActivity>;
            /// A thread's checkpoints, newest first (Python's `list()`).
            thread_history($crate::HistoryRequest) -> Vec<$crate::HistoryEntry>;
            /// A thread's checkpoints as branch lanes.
            thread_graph($crate::GraphRequest) -> $crate::ThreadGraph;
            /// The nodes and transitions a thread shows by what ran, sub-agents nested.
            thread_topology($crate::TopologyRequest) -> $crate::ThreadTopology;
            /// One checkpoint: values, writes, next tasks, metadata.
            checkpoint_detail($crate::CheckpointRequest) -> $crate::CheckpointDetail;
            /// A page of the list at a path in one checkpoint, and a search over all of it.
            state_page($crate::StatePageRequest) -> $crate::StatePage;
            /// Two checkpoints side by side.
            diff_checkpoints($crate::DiffRequest) -> $crate::CheckpointDiff;
            /// The steps of a branch, root first.
            replay_steps($crate::ReplayRequest) -> Vec<$crate::ReplayStep>;
            /// Each channel rebuilt from the writes with LangGraph's reducers.
            rebuild_report($crate::RebuildRequest) -> Vec<$crate::ChannelRebuild>;
            /// The checkpoints where the value at a path changed, across branches.
            watch_key($crate::WatchRequest) -> $crate::WatchReport;
            /// Whether an edited value fits its channel (nothing is written).
            validate_edit($crate::ValidateEditRequest) -> $crate::EditCheck;
            /// Fork a checkpoint (a copy, or with edited channels). One transaction.
            fork_checkpoint($crate::ForkRequest) -> $crate::ForkResult;
            /// Fork point / A / B for channels.
            merge_preview($crate::MergePreviewRequest) -> Vec<$crate::ThreeWay>;
            /// Merge channels of branch B into branch A. One transaction.
            merge_branches($crate::MergeRequest) -> $crate::ForkResult;
            /// Start an audit export (a job; its result is an `ExportResult`).
            start_export($crate::ExportRequest) -> String;
            /// Check an exported bundle.
            verify_export($crate::VerifyRequest) -> $crate::VerifyReport;
            /// Start a re-run with a live tail (a job; its result is the fork).
            start_rerun($crate::RerunRequest) -> String;
            /// Search inside the threads' values (a job; its result is a `ValueSearchSummary`).
            start_search($crate::ValueSearchRequest) -> String;
            /// Convert threads into another database in the other schema (a job).
            start_convert($crate::ConvertRequest) -> String;
            /// Where the bytes are: a storage report of the database or one thread (a job; its
            /// result is a `StorageReport`).
            start_storage_report($crate::StorageRequest) -> String;
            /// Which indexes would make the thread list's first page, a time range and the
            /// metadata filter fast, with the planner's estimate (catalog reads only).
            index_advice($crate::IndexAdviceRequest) -> $crate::IndexReport;
            /// Create or drop Flashback's indexes (`flashback_*`), or preview it; the reads
            /// they speed timed before and after. Postgres `CONCURRENTLY`, SQLite one
            /// transaction.
            index_apply($crate::IndexApplyRequest) -> $crate::IndexApplyReport;
            /// `index_apply` as a job: progress per statement, and a cancel that stops the
            /// build and undoes it (its result is an `IndexApplyReport`).
            start_index_apply($crate::IndexApplyRequest) -> String;
            /// A job's state and the events after a cursor.
            job_poll($crate::JobPollRequest) -> $crate::JobSnapshot;
            /// Ask a job to stop.
            job_cancel($crate::JobRequest) -> ();
            /// Delete a thread (or preview it). One transaction.
            delete_thread($crate::DeleteRequest) -> $crate::DeleteReport;
            /// Prune threads (or preview it). One transaction.
            prune_threads($crate::PruneRequest) -> $crate::PruneSummary;
            /// Prune across the database: threads chosen by id, age and status, keeping the
            /// latest checkpoints or deleting them (or preview it); one transaction, then an
            /// optional VACUUM.
            prune_database($crate::RetentionRequest) -> $crate::RetentionReport;
            /// Delete a branch (a checkpoint and its descendants), or preview it. One transaction.
            delete_branch($crate::DeleteBranchRequest) -> $crate::PruneSummary;
            /// Rebuild a three-table thread's damaged blob rows from the writes (or preview it).
            /// One transaction.
            repair_blobs($crate::RepairRequest) -> $crate::RepairReport;
            /// Copy a thread to a new thread id, in the same or another open database.
            copy_thread($crate::CopyRequest) -> $crate::CopyReport;
            /// Save a setting.
            set_setting($crate::SetSettingRequest) -> ();
            /// Memory store: items under a namespace prefix, most recently updated first.
            store_list($crate::StoreListRequest) -> Vec<$crate::StoreItem>;
            /// Memory store: one item.
            store_get($crate::StoreGetRequest) -> $crate::StoreItem;
            /// Memory store: items whose value's JSON text contains a text (any case).
            store_search($crate::StoreSearchRequest) -> Vec<$crate::StoreItem>;
            /// Memory store: the namespaces with their item counts.
            store_namespaces($crate::StoreNamespacesRequest) -> Vec<$crate::StoreNamespace>;
            /// Memory store: put an item (as Python's `store.put`). One transaction.
            store_put($crate::StorePutRequest) -> $crate::StorePutResult;
            /// Memory store: delete an item and its vectors (or preview it). One transaction.
            store_delete($crate::StoreDeleteRequest) -> $crate::StoreDeleteResult;
        }
    };
}

/// Builds [`COMMANDS`] and [`Api::dispatch`](crate::Api::dispatch) from the table.
macro_rules! api_dispatch {
    ($( $(#[$doc:meta])* $name:ident ( $($req:ty)? ) -> $resp:ty; )*) => {
        /// Every command, by name (the Tauri command names and the HTTP paths `/api/<name>`).
        pub const COMMANDS: &[&str] = &[$(stringify!($name)),*];

        impl crate::Api {
            /// Run a command by name with Tauri-shaped JSON arguments (`{"req": {...}}`): the
            /// HTTP transport's entry point.
            pub async fn dispatch(
                &self,
                command: &str,
                args: &serde_json::Value,
            ) -> crate::ApiResult<serde_json::Value> {
                match command {
                    $(
                        stringify!($name) => {
                            let out: $resp = self.$name($( request::<$req>(args)? )?).await?;
                            to_json(out)
                        }
                    )*
                    other => Err(crate::ApiError::not_found(format!("unknown command {other:?}"))),
                }
            }
        }
    };
}

for_each_command!(api_dispatch);

/// The `req` member of Tauri-shaped arguments.
fn request<T: serde::de::DeserializeOwned>(args: &serde_json::Value) -> crate::ApiResult<T> {
    let v = args.get("req").cloned().unwrap_or(serde_json::Value::Null);
    serde_json::from_value(v).map_err(|e| crate::ApiError::invalid(format!("bad arguments: {e}")))
}

/// A response as JSON.
pub(crate) fn to_json<T: serde::Serialize>(v: T) -> crate::ApiResult<serde_json::Value> {
    serde_json::to_value(v).map_err(|e| {
        crate::ApiError::new(crate::ErrorCode::Internal, format!("cannot serialise: {e}"))
    })
}
