//! The capture cap: a capture never holds more than [`set_cap`] bytes (64 MiB by default).
//!
//! A watcher thread looks at the active capture file a few times a second. Once it holds more
//! than the cap, everything but its last part is copied to the real stderr, labelled with the
//! call (or the calls sharing it), and its room is given back: a hole punched at the front of
//! the file on Linux and macOS, zeroed room of the sparse file on Windows (NTFS). The call's
//! attached output then keeps its tail and says how many earlier bytes are not shown; its
//! stderr copy at the end resumes where the watcher stopped. The tool never notices: nothing
//! blocks, nothing fails with "no space".
//!
//! The same watcher passes on late output: what children of finished calls write to those
//! calls' files (see `late`).
//!
//! Quiet and small calls never meet the watcher: it only reads the file's size (one `lseek`)
//! on its ticks, from its own thread.

use std::io::{BufWriter, Write as _};
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::Duration;

use super::{Holders, LateLog, RealStderr, Streams, cell, file_len, home_err, is_capturing};
use crate::sys;

/// The default of [`set_cap`].
pub(crate) const DEFAULT_CAP: u64 = 64 * 1024 * 1024;

/// How often the watcher looks at the active capture.
const TICK: Duration = Duration::from_millis(100);

static CAP: AtomicU64 = AtomicU64::new(DEFAULT_CAP);

/// Sets the most bytes a capture holds (at least 64 KiB) before the front of it is moved to
/// the log (a server sets it from `ServerConfig::capture_cap` when it starts).
pub fn set_cap(bytes: u64) {
    CAP.store(bytes.max(64 * 1024), Ordering::Relaxed);
}

/// Starts the watcher, once per process.
pub(super) fn watch() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let spawned = thread::Builder::new()
            .name("mcpline-capture-cap".into())
            .spawn(|| {
                loop {
                    thread::sleep(TICK);
                    if is_capturing() {
                        check();
                    }
                    follow_late_output();
                }
            });
        if let Err(e) = spawned {
            crate::log::log_line(&format!("captures are not capped: no watcher thread: {e}"));
        }
    });
}

/// Passes on late output written to the files of finished calls (see `late`).
fn follow_late_output() {
    let mut cell = cell();
    let cell = &mut *cell;
    if !cell.after.any() {
        return;
    }
    cell.after.watch(&mut LateLog::new(home_err(&cell.streams)));
}

/// Moves the front of the active capture to the log if it holds more than the cap.
fn check() {
    let cap = CAP.load(Ordering::Relaxed);
    let mut cell = cell();
    let Streams::Capturing {
        home,
        file,
        holders,
        drained,
        ..
    } = &mut cell.streams
    else {
        return;
    };
    let Ok(size) = file_len(file) else {
        return;
    };
    if size.saturating_sub(*drained) <= cap {
        return;
    }
    // Keep the last part (enough for the attached tail), cut after a newline when one is near.
    let keep = (cap / 2).min(4 * 1024 * 1024);
    let mut end = size - keep;
    let mut probe = vec![0; 64 * 1024];
    let from = end.saturating_sub(probe.len() as u64).max(*drained);
    if let Ok(read) = super::captured::read_at(file, &mut probe[..(end - from) as usize], from) {
        if let Some(newline) = probe[..read].iter().rposition(|&b| b == b'\n') {
            end = from + newline as u64 + 1;
        }
    }
    let label = match holders {
        Holders::Sole { label, .. } => format!("[{label}] "),
        Holders::Shared(overlap) => format!("[{}] ", overlap.running_labels().join(" + ")),
    };
    let front = super::Captured::whole(std::sync::Arc::clone(file), *drained, end);
    let mut out = BufWriter::new(RealStderr::on(&home.err));
    let _ = front.copy_labelled(&label, &mut out);
    let _ = writeln!(
        out,
        "{label}[… the capture passed its cap of {cap} bytes: what it held up to here went to \
         the log while the call ran …]"
    );
    let _ = out.flush();
    *drained = end;
    sys::publish_capture_start(end);
    let _ = sys::release_front(file, end);
}
