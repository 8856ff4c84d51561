//! The desktop app's commands through Tauri's real IPC handler (mock runtime, no window
//! system): argument names and error shapes end to end, and the same answers as the HTTP
//! transport's dispatch.

use flashback_api::secrets::MemorySecrets;
use flashback_api::{Api, ApiConfig, HostMode, Initial, Policy};
use serde_json::{json, Value as Json};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, mock_context, noop_assets, INVOKE_KEY};
use tauri::webview::InvokeRequest;

fn fixture_copy(dir: &std::path::Path) -> String {
    let path = dir.join("agents.sqlite");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/langgraph.sqlite"),
        &path,
    )
    .expect("copy fixture");
    path.to_string_lossy().into_owned()
}

fn api(dir: &std::path::Path, db: &str) -> Api {
    Api::new(ApiConfig {
        host: HostMode::Desktop,
        data_dir: dir.join("data"),
        initial: Initial::Location(db.to_owned()),
        secrets: Box::new(MemorySecrets::default()),
        policy: Policy::full(),
    })
    .expect("api")
}

struct App {
    _app: tauri::App<tauri::test::MockRuntime>,
    webview: tauri::WebviewWindow<tauri::test::MockRuntime>,
}

fn app(api: Api) -> App {
    let builder = flashback_app::ipc::specta_builder::<tauri::test::MockRuntime>();
    let app = mock_builder()
        .manage(api)
        .invoke_handler(builder.invoke_handler())
        .build(mock_context(noop_assets()))
        .expect("mock app");
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .expect("webview");
    App { _app: app, webview }
}

/// Invoke `cmd` with `args` (the JSON object the frontend sends) through the IPC handler.
fn invoke(app: &App, cmd: &str, args: Json) -> Result<Json, Json> {
    get_ipc_response(
        &app.webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().expect("url"),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|body| body.deserialize::<Json>().expect("JSON response"))
}

#[test]
fn commands_take_the_same_arguments_over_ipc_and_http() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fixture_copy(dir.path());
    let app = app(api(dir.path(), &db));

    let info = invoke(&app, "app_info", json!({})).expect("app_info");
    assert_eq!(info["host"], "desktop");
    let handle = info["initial"]["db"].as_str().expect("opened").to_owned();
    let threads = invoke(&app, "list_threads", json!({"req": {"db": handle}})).expect("threads");
    assert_eq!(threads.as_array().map(Vec::len), Some(12));

    // The HTTP transport's dispatch with the same arguments gives the same answer.
    let http = api(dir.path(), &db);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let http_threads = rt.block_on(async {
        let info = http.app_info().await.expect("app_info");
        let handle = info.initial.expect("opened").db;
        http.dispatch("list_threads", &json!({"req": {"db": handle}}))
            .await
            .expect("dispatch")
    });
    assert_eq!(threads, http_threads);

    let graph = invoke(
        &app,
        "thread_graph",
        json!({"req": {"db": handle, "thread_id": "forked", "collapsed": []}}),
    )
    .expect("graph");
    assert_eq!(graph["rows"].as_array().map(Vec::len), Some(14));
}

#[test]
fn errors_cross_ipc_as_code_and_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fixture_copy(dir.path());
    let app = app(api(dir.path(), &db));
    let info = invoke(&app, "app_info", json!({})).expect("app_info");
    let handle = info["initial"]["db"].as_str().expect("opened").to_owned();

    let err = invoke(
        &app,
        "thread_graph",
        json!({"req": {"db": handle, "thread_id": "no-such-thread"}}),
    )
    .expect_err("unknown thread");
    assert_eq!(err["code"], "not_found", "{err}");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("forked")),
        "{err}"
    );

    let err = invoke(&app, "list_threads", json!({"req": {"db": "stale"}})).expect_err("stale");
    assert_eq!(err["code"], "not_open", "{err}");

    // A malformed argument is rejected by Tauri itself (a string, not {code, message}); the UI
    // turns it into an "ipc" failure.
    let err = invoke(&app, "list_threads", json!({"request": {}})).expect_err("bad args");
    assert!(err.is_string(), "{err}");
}

#[test]
fn the_command_line_picks_the_first_database() {
    use flashback_app::initial_from_args;
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(initial_from_args(&args(&[])), Ok(Initial::Last));
    assert_eq!(initial_from_args(&args(&["--demo"])), Ok(Initial::Demo));
    assert_eq!(
        initial_from_args(&args(&["agents.sqlite"])),
        Ok(Initial::Location("agents.sqlite".into()))
    );
    assert!(initial_from_args(&args(&["--bogus"])).is_err());
    assert!(initial_from_args(&args(&["a", "b"])).is_err());
    assert!(initial_from_args(&args(&["--help"]))
        .expect_err("usage")
        .contains("usage"));
}

/// The desktop app's exports go through the same output rules as the CLI's `-o`: only a
/// regular file is replaced (a link is followed to the file it names), never a FIFO, a
/// device or a directory.
#[cfg(unix)]
#[test]
fn the_app_replaces_only_regular_files_when_it_exports() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fixture_copy(dir.path());
    let app = app(api(dir.path(), &db));
    let info = invoke(&app, "app_info", json!({})).expect("app_info");
    let handle = info["initial"]["db"].as_str().expect("opened").to_owned();
    let export = |path: &std::path::Path| {
        invoke(
            &app,
            "start_export",
            json!({"req": {"db": handle, "thread_id": "forked", "format": "json",
                           "redact": [], "path": path.to_string_lossy()}}),
        )
    };
    let fifo = dir.path().join("pipe.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let folder = dir.path().join("folder.json");
    std::fs::create_dir(&folder).expect("mkdir");
    for path in [
        fifo.as_path(),
        folder.as_path(),
        std::path::Path::new("/dev/null"),
    ] {
        let err = export(path).expect_err(&path.display().to_string());
        assert_eq!(err["code"], "invalid_input", "{err}");
        assert!(
            err["message"]
                .as_str()
                .is_some_and(|m| m.contains("not a regular file")),
            "{err}"
        );
    }
    assert!(std::fs::symlink_metadata(&fifo)
        .expect("fifo")
        .file_type()
        .is_fifo());
    assert!(std::fs::metadata("/dev/null")
        .expect("device")
        .file_type()
        .is_char_device());

    // A link to a regular file: the file is replaced, the link stays.
    let real = dir.path().join("real.json");
    std::fs::write(&real, "old").expect("write");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let job = export(&link).expect("started");
    let job = job.as_str().expect("job id").to_owned();
    let mut state = Json::Null;
    for _ in 0..300 {
        let snap =
            invoke(&app, "job_poll", json!({"req": {"job": job, "cursor": 0}})).expect("job_poll");
        state = snap["state"].clone();
        if state != "running" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(state, "succeeded");
    assert!(std::fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real)
        .expect("read")
        .contains("flashback-audit"));
}
