//! Embeds the built UI (`ui/dist`, made by `npm --prefix ui run build`) for `flashback serve`.
//!
//! Writes `$OUT_DIR/ui_assets.rs`: `UI_ASSETS: &[(&str, &[u8])]` (URL path, bytes). When the UI
//! has not been built the list is empty and `serve` says how to build it; the rest of the CLI
//! works without it (and without Node or WebKit).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let dist = manifest.join("../../ui/dist");
    // Cargo reruns a build script on every build while a watched path is missing (and the CLI
    // then recompiles), so without a built UI watch `ui/` (small: no node_modules of its own
    // worth scanning), whose listing changes when `ui/dist` appears.
    if dist.is_dir() {
        println!("cargo:rerun-if-changed={}", dist.display());
    } else {
        println!(
            "cargo:rerun-if-changed={}",
            manifest.join("../../ui").display()
        );
    }
    let mut files = Vec::new();
    walk(&dist, &mut files);
    let mut code = String::from(
        "/// The built UI: (URL path, bytes).\npub static UI_ASSETS: &[(&str, &[u8])] = &[\n",
    );
    for f in &files {
        let rel = f
            .strip_prefix(&dist)
            .expect("under dist")
            .to_string_lossy()
            .replace('\\', "/");
        let abs = f.canonicalize().expect("canonical path");
        let _ = writeln!(
            code,
            "    ({:?}, include_bytes!({:?})),",
            format!("/{rel}"),
            abs
        );
    }
    code.push_str("];\n");
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it")).join("ui_assets.rs");
    // A new file renamed into place, never the old one rewritten: a target directory copied
    // with hard links (`cp -al`, as parallel worktrees seed theirs) shares the old file's
    // inode, and rewriting it would make the other copy embed this checkout's UI.
    let tmp = out.with_extension("rs.tmp");
    let _ = std::fs::remove_file(&tmp);
    std::fs::write(&tmp, code).expect("write ui_assets.rs");
    std::fs::rename(&tmp, &out).expect("rename ui_assets.rs into place");
}
