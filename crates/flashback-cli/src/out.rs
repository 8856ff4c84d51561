//! Output that never panics. `println!` and `eprintln!` panic when their pipe is closed
//! (`flashback … | head`, `flashback … 2>&1 | true`); a reader that went away is no reason to
//! crash, so everything the CLI prints goes through here and what cannot be written is dropped.

use std::io::Write;

/// Write `text` to stdout as is.
pub fn stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Write `line` and a newline to stderr.
pub fn stderr_line(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes());
    let _ = err.write_all(b"\n");
    let _ = err.flush();
}
