//! The "with JSON view" part of the benchmark, as a real output pays it: every checkpoint's
//! channel values and pending writes serialized straight to JSON bytes (`JsonView`, no
//! intermediate `serde_json::Value`), one JSON line per checkpoint, checkpoints rendered in
//! parallel and written in order to a writer as they are done (never all collected).

use flashback_codec::{JsonView, ViewOptions};
use flashback_storage::CheckpointTuple;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

/// Rendering threads (the benchmark machines have 2 cores).
const WORKERS: usize = 2;
/// Rendered checkpoints that may wait for the writer, per worker.
const AHEAD: usize = 4;

/// A writer that counts the bytes it is given.
pub struct Counting<W> {
    inner: W,
    /// Bytes written so far.
    pub bytes: u64,
}

impl<W: Write> Counting<W> {
    pub fn new(inner: W) -> Self {
        Counting { inner, bytes: 0 }
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// One checkpoint as a JSON line:
/// `{"checkpoint_id", "checkpoint_ns", "values": {channel: view}, "writes": [{"task_id",
/// "channel", "value": view}]}`.
fn render(t: &CheckpointTuple, out: &mut Vec<u8>) -> serde_json::Result<()> {
    let opts = ViewOptions::default();
    let h = &t.header;
    out.extend_from_slice(b"{\"checkpoint_id\":");
    serde_json::to_writer(&mut *out, &h.checkpoint_id)?;
    out.extend_from_slice(b",\"checkpoint_ns\":");
    serde_json::to_writer(&mut *out, &h.checkpoint_ns)?;
    out.extend_from_slice(b",\"values\":{");
    for (i, (channel, value)) in t.checkpoint.channel_values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, channel)?;
        out.push(b':');
        serde_json::to_writer(&mut *out, &JsonView::decoded(value, opts))?;
    }
    out.extend_from_slice(b"},\"writes\":[");
    for (i, w) in t.pending_writes.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"task_id\":");
        serde_json::to_writer(&mut *out, &w.task_id)?;
        out.extend_from_slice(b",\"channel\":");
        serde_json::to_writer(&mut *out, &w.channel)?;
        out.extend_from_slice(b",\"value\":");
        serde_json::to_writer(&mut *out, &JsonView::decoded(&w.value, opts))?;
        out.push(b'}');
    }
    out.extend_from_slice(b"]}\n");
    Ok(())
}

/// Render every tuple to `out`, in order, on [`WORKERS`] threads; buffers are recycled.
pub fn write_all<W: Write + Send>(tuples: &[CheckpointTuple], out: &mut W) -> io::Result<()> {
    let next = AtomicUsize::new(0);
    let (done_tx, done_rx) = mpsc::sync_channel::<(usize, Vec<u8>)>(WORKERS * AHEAD);
    let spare: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            let done_tx = done_tx.clone();
            let (next, spare) = (&next, &spare);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(t) = tuples.get(i) else { break };
                let recycled = spare.lock().ok().and_then(|mut s| s.pop());
                let mut buf = recycled.unwrap_or_default();
                buf.clear();
                if render(t, &mut buf).is_err() || done_tx.send((i, buf)).is_err() {
                    break;
                }
            });
        }
        drop(done_tx);
        // Write in checkpoint order as the lines arrive.
        let mut waiting = BTreeMap::new();
        let mut want = 0;
        let mut result = Ok(());
        for (i, buf) in done_rx {
            waiting.insert(i, buf);
            while let Some(buf) = waiting.remove(&want) {
                if result.is_ok() {
                    result = out.write_all(&buf);
                }
                if let Ok(mut s) = spare.lock() {
                    s.push(buf);
                }
                want += 1;
            }
        }
        result?;
        if want < tuples.len() {
            return Err(io::Error::other("a checkpoint could not be rendered"));
        }
        out.flush()
    })
}
