//! Helpers for the API tests.
#![allow(dead_code)]

use flashback_api::secrets::MemorySecrets;
use flashback_api::{
    Api, ApiConfig, CheckpointDetail, CheckpointRequest, DbInfo, GraphRequest, HostMode, Initial,
    JobSnapshot, JobState, OpenRequest, Policy, ThreadGraph,
};
use std::path::{Path, PathBuf};

pub mod js;
pub mod library;
pub mod space;
pub mod three;

/// The repository's `tests/fixtures` directory.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// An API with its own data directory (inside `dir`) and in-memory secrets.
pub fn api_in(dir: &Path, initial: Initial) -> Api {
    api_as(HostMode::Serve, dir, initial)
}

/// [`api_in`] for a given host mode.
pub fn api_as(host: HostMode, dir: &Path, initial: Initial) -> Api {
    Api::new(ApiConfig {
        host,
        data_dir: dir.join("data"),
        initial,
        secrets: Box::new(MemorySecrets::default()),
        policy: Policy::full(),
    })
    .expect("api")
}

/// A private copy of the SQLite fixture in `dir`.
pub fn fixture_copy(dir: &Path) -> PathBuf {
    let path = dir.join("langgraph.sqlite");
    std::fs::copy(fixtures().join("langgraph.sqlite"), &path).expect("copy fixture");
    path
}

/// A private copy of the fixture in a temporary directory, an API whose data directory is
/// next to it, and the copy opened (the directory lives as long as this does).
pub struct OpenedFixture {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
    pub api: Api,
    pub db: DbInfo,
}

pub async fn opened_fixture() -> OpenedFixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().expect("utf-8")).await;
    OpenedFixture { dir, path, api, db }
}

/// Open a location.
pub async fn open(api: &Api, location: &str) -> DbInfo {
    api.open_database(OpenRequest {
        location: location.to_owned(),
        password: None,
        remember: false,
        save_password: false,
    })
    .await
    .expect("open")
}

/// Poll a job until it is no longer running.
pub async fn finish(api: &Api, job: &str) -> JobSnapshot {
    let mut events = Vec::new();
    let mut cursor = 0;
    for _ in 0..600 {
        let mut s = api
            .job_poll(flashback_api::JobPollRequest {
                job: job.to_owned(),
                cursor,
            })
            .await
            .expect("poll");
        cursor = s.cursor;
        events.append(&mut s.events);
        if s.state != JobState::Running {
            s.events = events;
            return s;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("job {job} still running after 30 s");
}

/// SHA-256 of a file's bytes (to prove a file unchanged).
pub fn fingerprint(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(path).expect("read");
    format!("{:x}", Sha256::digest(&bytes))
}

/// The thread's graph.
pub async fn graph(api: &Api, db: &DbInfo, t: &str) -> ThreadGraph {
    api.thread_graph(GraphRequest {
        db: db.db.clone(),
        thread_id: t.into(),
        collapsed: vec![],
    })
    .await
    .expect("graph")
}

/// One checkpoint's detail.
/// A thread's root-namespace history, newest first.
pub async fn root_history(api: &Api, db: &DbInfo, t: &str) -> Vec<flashback_api::HistoryEntry> {
    api.thread_history(flashback_api::HistoryRequest {
        db: db.db.clone(),
        thread_id: t.into(),
        checkpoint_ns: Some(String::new()),
        limit: None,
        before: None,
        filter: Default::default(),
    })
    .await
    .expect("history")
}

/// One checkpoint as the app asks for it: live when it is its namespace's latest.
pub async fn detail(api: &Api, db: &DbInfo, t: &str, ns: &str, id: &str) -> CheckpointDetail {
    api.checkpoint_detail(CheckpointRequest {
        live: Some(true),
        page: None,
        db: db.db.clone(),
        thread_id: t.into(),
        checkpoint_ns: ns.into(),
        checkpoint_id: Some(id.into()),
        reveal_secrets: false,
        full: false,
        raw: false,
        reducers: Default::default(),
        allow_locked: false,
    })
    .await
    .expect("detail")
}
