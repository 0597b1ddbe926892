//! `MCPLINE_TRACE=FILE`: every frame in and out, appended to FILE with a UTC timestamp and its
//! direction (`<-` read from the client, `->` written to it), never to stdout.
//!
//! Recording copies the frame into a bounded queue and returns; a writer thread appends to the
//! file. When the file cannot keep up, frames are dropped (and counted in the file) rather than
//! slowing the server down.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::log::log_line;

/// The environment variable that names the trace file.
pub const TRACE_ENV: &str = "MCPLINE_TRACE";

/// Frames that may wait for the writer before new ones are dropped.
const QUEUE: usize = 16 * 1024;

/// Which way a frame went.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Direction {
    In,
    Out,
}

struct Entry {
    at: SystemTime,
    direction: Direction,
    bytes: Vec<u8>,
}

/// A running trace (see the module documentation).
pub(crate) struct Trace {
    queue: SyncSender<Entry>,
    dropped: Arc<AtomicU64>,
}

impl Trace {
    /// The trace `MCPLINE_TRACE` asks for, if any (a file that cannot be opened is logged once).
    pub(crate) fn from_env() -> Option<Self> {
        let path = std::env::var_os(TRACE_ENV).filter(|p| !p.is_empty())?;
        let file = match OpenOptions::new().create(true).append(true).open(&path) {
            Ok(file) => file,
            Err(e) => {
                log_line(&format!(
                    "cannot open the trace file {} named by {TRACE_ENV}: {e}; serving without \
                     a trace",
                    path.to_string_lossy()
                ));
                return None;
            }
        };
        let (queue, entries) = sync_channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&dropped);
        let spawned = thread::Builder::new()
            .name("mcpline-trace".into())
            .spawn(move || write_entries(&entries, file, &counted));
        if let Err(e) = spawned {
            log_line(&format!(
                "cannot start the trace writer: {e}; serving without a trace"
            ));
            return None;
        }
        Some(Self { queue, dropped })
    }

    /// Records one frame (without its line end); never blocks.
    pub(crate) fn record(&self, direction: Direction, bytes: &[u8]) {
        let entry = Entry {
            at: SystemTime::now(),
            direction,
            bytes: bytes.strip_suffix(b"\n").unwrap_or(bytes).to_vec(),
        };
        match self.queue.try_send(entry) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

fn write_entries(entries: &Receiver<Entry>, file: File, dropped: &AtomicU64) {
    let mut out = BufWriter::new(file);
    while let Ok(first) = entries.recv() {
        let mut next = Some(first);
        while let Some(entry) = next {
            let skipped = dropped.swap(0, Ordering::Relaxed);
            if skipped > 0 {
                let _ = writeln!(
                    out,
                    "{} !! {skipped} frames not traced (the file fell behind)",
                    timestamp(entry.at)
                );
            }
            let arrow = match entry.direction {
                Direction::In => "<-",
                Direction::Out => "->",
            };
            let _ = write!(out, "{} {arrow} ", timestamp(entry.at));
            let _ = out.write_all(&entry.bytes);
            let _ = out.write_all(b"\n");
            next = entries.try_recv().ok();
        }
        if out.flush().is_err() {
            return;
        }
    }
}

/// `2026-12-03T14:30:00.123456Z`.
fn timestamp(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(i64::try_from(days).unwrap_or(0));
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_micros()
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        let at = UNIX_EPOCH + Duration::from_micros(1_764_772_200_123_456);
        assert_eq!(timestamp(at), "2025-12-03T14:30:00.123456Z");
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(timestamp(leap), "2000-02-29T00:00:00.000000Z");
    }
}
