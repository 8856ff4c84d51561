//! The export job: build the audit bundle (progress, cancel), render JSON or HTML, write it
//! atomically or hand the content back.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::jobs::registry::JobHandle;
use crate::types::{self, ExportFormat, ExportRequest, ExportResult};
use crate::Session;
use std::path::Path;

fn safe_file_part(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    if cleaned.is_empty() {
        "thread".into()
    } else {
        cleaned
    }
}

pub(super) async fn export_job(
    s: &Session,
    req: &ExportRequest,
    job: &JobHandle,
    delta: flashback_engine::delta::DeltaOptions,
    within: Option<&Path>,
) -> ApiResult<ExportResult> {
    use flashback_engine::export::{self, ExportProgress};
    let opts = export::ExportOptions {
        checkpoint_id: req.checkpoint_id.clone(),
        redact: req.redact.clone(),
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        delta,
        ..Default::default()
    };
    let mut observe = |p: ExportProgress| {
        match p {
            ExportProgress::Loading { total } => job.progress(0, total, "reading checkpoints"),
            ExportProgress::Hashing { done, total } => job.progress(done, total, "hashing"),
        }
        !job.is_cancelled()
    };
    // An encrypted database's values stay sealed unless decrypting was asked for: read them
    // on a connection without the key (each is then its ciphertext's size and hash).
    let sealed = match (&s.info.encryption, req.decrypt) {
        (Some(_), false) if s.key.is_some() => {
            Some(flashback_storage::open(&s.connect, flashback_storage::Read::default()).await?)
        }
        (Some(_), true) => {
            s.require_key()?;
            None
        }
        _ => None,
    };
    let store = sealed.as_deref().unwrap_or(s.store.as_ref());
    let bundle = export::build_bundle_observed(store, &req.thread_id, &opts, &mut observe).await?;
    let (text, ext) = match req.format {
        ExportFormat::Html => (export::render_html(&bundle), "html"),
        ExportFormat::Json => {
            let mut t = serde_json::to_string_pretty(&bundle).map_err(|e| {
                ApiError::new(ErrorCode::Internal, format!("cannot serialise: {e}"))
            })?;
            t.push('\n');
            (t, "json")
        }
    };
    if job.is_cancelled() {
        return Err(ApiError::new(ErrorCode::Cancelled, "cancelled"));
    }
    let file_name = format!(
        "{}-{}.{ext}",
        safe_file_part(&req.thread_id),
        req.checkpoint_id
            .as_deref()
            .map_or_else(|| "tree".to_owned(), safe_file_part)
    );
    job.progress(bundle.checkpoint_count, bundle.checkpoint_count, "writing");
    let size = types::count(text.len());
    let (path, content) = match &req.path {
        Some(p) => {
            crate::outfile::write(Path::new(p), text.as_bytes(), within)?;
            (Some(p.clone()), None)
        }
        None => (None, Some(text)),
    };
    Ok(ExportResult {
        path,
        file_name,
        content,
        bundle_hash: bundle.bundle_hash,
        checkpoints: types::count(bundle.checkpoint_count),
        size,
    })
}
