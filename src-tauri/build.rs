//! tauri-build for the root package: the app's sources, capabilities and icons live in
//! `src-tauri/` while `tauri.conf.json` is at the repository root (see Cargo.toml).
fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new().capabilities_path_pattern("./src-tauri/capabilities/**/*"),
    )
    .expect("tauri-build failed");
}
