//! Desktop entry point. Until the GUI lands, point users at the CLI.
fn main() {
    eprintln!(
        "{}: the desktop window is not built yet; use the `flashback` CLI (see README.md)",
        flashback_app::APP_NAME
    );
    std::process::exit(2);
}
