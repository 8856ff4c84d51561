//! The Tauri commands. Each forwards to the `flashback_api::Api` method of the same name (the
//! methods `flashback serve` dispatches over HTTP) and takes one `req` struct, so both
//! transports send the same `{"req": {...}}` arguments.

use flashback_api::*;
use flashback_engine::diff::CheckpointDiff;
use flashback_engine::export::VerifyReport;
use flashback_engine::fork::ForkResult;
use flashback_engine::merge::ThreeWay;
use flashback_engine::replay::ReplayStep;
use tauri::State;

type R<T> = Result<T, ApiError>;

/// Version, host, keyring, settings and the first database.
#[tauri::command]
#[specta::specta]
pub async fn app_info(api: State<'_, Api>) -> R<AppInfo> {
    api.app_info().await
}

/// Open a SQLite file or a Postgres URL (read-only).
#[tauri::command]
#[specta::specta]
pub async fn open_database(api: State<'_, Api>, req: OpenRequest) -> R<DbInfo> {
    api.open_database(req).await
}

/// Open the built-in demo database (a private copy).
#[tauri::command]
#[specta::specta]
pub async fn open_demo(api: State<'_, Api>, req: DemoRequest) -> R<DbInfo> {
    api.open_demo(req).await
}

/// Reopen a remembered connection.
#[tauri::command]
#[specta::specta]
pub async fn open_recent(api: State<'_, Api>, req: OpenRecentRequest) -> R<DbInfo> {
    api.open_recent(req).await
}

/// Remembered connections, most recent first.
#[tauri::command]
#[specta::specta]
pub async fn recent_connections(api: State<'_, Api>) -> R<Vec<RecentConnection>> {
    api.recent_connections().await
}

/// Forget a connection and its saved password.
#[tauri::command]
#[specta::specta]
pub async fn forget_connection(api: State<'_, Api>, req: ConnectionId) -> R<()> {
    api.forget_connection(req).await
}

/// Close a database handle.
#[tauri::command]
#[specta::specta]
pub async fn close_database(api: State<'_, Api>, req: DbRequest) -> R<()> {
    api.close_database(req).await
}

/// Every thread with its status.
#[tauri::command]
#[specta::specta]
pub async fn list_threads(api: State<'_, Api>, req: DbRequest) -> R<Vec<ThreadSummary>> {
    api.list_threads(req).await
}

/// A thread's checkpoints as branch lanes.
#[tauri::command]
#[specta::specta]
pub async fn thread_graph(api: State<'_, Api>, req: GraphRequest) -> R<ThreadGraph> {
    api.thread_graph(req).await
}

/// One checkpoint: values, writes, tasks, metadata.
#[tauri::command]
#[specta::specta]
pub async fn checkpoint_detail(api: State<'_, Api>, req: CheckpointRequest) -> R<CheckpointDetail> {
    api.checkpoint_detail(req).await
}

/// Two checkpoints side by side.
#[tauri::command]
#[specta::specta]
pub async fn diff_checkpoints(api: State<'_, Api>, req: DiffRequest) -> R<CheckpointDiff> {
    api.diff_checkpoints(req).await
}

/// The steps of a branch, root first.
#[tauri::command]
#[specta::specta]
pub async fn replay_steps(api: State<'_, Api>, req: ReplayRequest) -> R<Vec<ReplayStep>> {
    api.replay_steps(req).await
}

/// Whether an edited value fits its channel.
#[tauri::command]
#[specta::specta]
pub async fn validate_edit(api: State<'_, Api>, req: ValidateEditRequest) -> R<EditCheck> {
    api.validate_edit(req).await
}

/// Fork a checkpoint (copy or edited).
#[tauri::command]
#[specta::specta]
pub async fn fork_checkpoint(api: State<'_, Api>, req: ForkRequest) -> R<ForkResult> {
    api.fork_checkpoint(req).await
}

/// Fork point / A / B for channels.
#[tauri::command]
#[specta::specta]
pub async fn merge_preview(api: State<'_, Api>, req: MergePreviewRequest) -> R<Vec<ThreeWay>> {
    api.merge_preview(req).await
}

/// Merge channels of branch B into branch A.
#[tauri::command]
#[specta::specta]
pub async fn merge_branches(api: State<'_, Api>, req: MergeRequest) -> R<ForkResult> {
    api.merge_branches(req).await
}

/// Start an audit export job.
#[tauri::command]
#[specta::specta]
pub async fn start_export(api: State<'_, Api>, req: ExportRequest) -> R<String> {
    api.start_export(req).await
}

/// Check an exported bundle.
#[tauri::command]
#[specta::specta]
pub async fn verify_export(api: State<'_, Api>, req: VerifyRequest) -> R<VerifyReport> {
    api.verify_export(req).await
}

/// Start a re-run job with a live tail.
#[tauri::command]
#[specta::specta]
pub async fn start_rerun(api: State<'_, Api>, req: RerunRequest) -> R<String> {
    api.start_rerun(req).await
}

/// A job's state and new events.
#[tauri::command]
#[specta::specta]
pub async fn job_poll(api: State<'_, Api>, req: JobPollRequest) -> R<JobSnapshot> {
    api.job_poll(req).await
}

/// Ask a job to stop.
#[tauri::command]
#[specta::specta]
pub async fn job_cancel(api: State<'_, Api>, req: JobRequest) -> R<()> {
    api.job_cancel(req).await
}

/// Delete a thread (or preview it).
#[tauri::command]
#[specta::specta]
pub async fn delete_thread(api: State<'_, Api>, req: DeleteRequest) -> R<DeleteReport> {
    api.delete_thread(req).await
}

/// Prune threads (or preview it).
#[tauri::command]
#[specta::specta]
pub async fn prune_threads(api: State<'_, Api>, req: PruneRequest) -> R<PruneSummary> {
    api.prune_threads(req).await
}

/// Save a setting.
#[tauri::command]
#[specta::specta]
pub async fn set_setting(api: State<'_, Api>, req: SetSettingRequest) -> R<()> {
    api.set_setting(req).await
}
