//! The capture cell: the only place where mcpline touches the process's standard descriptors.
//!
//! Two guards live here, both process-global because descriptors are:
//!
//! - [`ProtectedStdio`] moves the protocol streams (the real stdin and stdout) onto private,
//!   close-on-exec descriptors and makes the standard ones harmless: fd 0 reads the null device
//!   (a tool that prompts gets end-of-file at once) and fd 1 is a copy of the real stderr (a stray
//!   `print()`, a C library or a child process writes to the log, never into the protocol).
//! - [`Capture`] redirects fds 1 and 2 into an unlinked temporary file for the duration of one tool
//!   call. A file, never a pipe: a chatty child can never block on a full pipe buffer, and nobody
//!   has to drain it. [`Capture::finish`] restores the descriptors and hands back a [`Captured`]
//!   that reads the bytes from the file on demand (memory stays bounded whatever the size).
//!
//! # Rules
//!
//! - Captures must not nest or run concurrently: a second [`Capture::begin`] while one is active
//!   returns [`CaptureError::AlreadyActive`] and leaves the first capture untouched.
//! - Restoration rides `Drop`: a panicking tool, or an early return, cannot leave the process mute.
//!   Restoring is idempotent ([`Capture::finish`] then `Drop` restores once).
//! - Buffers: `begin` and `finish` flush the C runtime's stdio buffers (`fflush(NULL)`; on Windows
//!   the UCRT's `fflush`). Language-level buffers (Python's `sys.stdout`/`sys.stderr`, Rust's
//!   `std::io::stdout()` line buffer) are the caller's job, before `begin` and before `finish`.
//! - A standard descriptor that is closed when a guard needs it gets the null device parked on it
//!   first (as pytest's `FDCapture` does), so restoring is always well defined; the null device
//!   stays there afterwards.
//! - Descriptors kept for our own use (saved copies, the reading handle of the capture file, the
//!   protocol streams) are close-on-exec (non-inheritable on Windows); fds 1 and 2 pointing at the
//!   capture file are inherited by children, which is the point.
//!
//! # Cost
//!
//! The server brackets every tool call with `begin`/`finish`, so a cycle is kept to a handful of
//! system calls. On unix an empty cycle is: `fcntl(F_DUPFD_CLOEXEC)` x2 and `dup2` x2 to begin,
//! `dup2` x2, `close` x2 and `lseek` to finish, one `lseek` to check the reused file, plus two
//! `fflush(NULL)` (no system call when no C buffer holds data) and one uncontended mutex.
//!
//! While [`ProtectedStdio`] is installed (a server is running) the process's standard
//! descriptors belong to the cell, so the copies of fds 1 and 2 a capture restored are kept for
//! the next capture: the `fcntl` and `close` pairs are paid once, not per call. Caveat: a change
//! to fd 1 or 2 made between captures (by a background thread) is undone when the next capture
//! ends, as a change made during a capture always is.
//!
//! And when a capture ends empty while the next call is already queued, the server ends it with
//! [`Capture::finish_or_park`]: fds 1 and 2 stay on the empty file and the next `begin` takes it
//! over, so a quiet call costs two `lseek` (one at each end) and no `dup2` at all.
//!
//! The capture file is reused while it stays empty: `finish` keeps a file that nobody wrote to as
//! a spare (an empty file nobody wrote to is as good as a fresh one), and the next `begin` takes
//! it after checking it is still empty (a background child of an earlier tool that is still
//! writing makes it non-empty; it is then discarded). A capture that received bytes hands its
//! file to the [`Captured`] and the next `begin` creates a fresh one. So one descriptor (the
//! spare) stays open between captures. Caveat: a background child that inherited fds 1/2 during
//! an empty capture and writes only during a later one is attributed to that later capture.
//!
//! # Caveats
//!
//! - `fflush(NULL)` locks every C stream in turn; a thread blocked inside a C stdio read (for
//!   example `fgets(stdin)`) blocks it. While [`ProtectedStdio`] is installed fd 0 is the null
//!   device, so such a read ends at once.
//! - Windows: the C runtime's `_dup2` closes the OS handle that the target fd held. Objects that
//!   cached that handle (`CPython`'s console writer `_WindowsConsoleIO` caches it when
//!   stdout/stderr is a console) must be re-created by the caller after a redirection.

use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as sys;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as sys;

/// The parent-death watch's Windows half (lives here because this folder holds the crate's
/// `unsafe`).
#[cfg(windows)]
mod parent_windows;
#[cfg(windows)]
pub(crate) use parent_windows::ParentHandle;

use crate::sync::lock;

#[cfg(not(any(unix, windows)))]
compile_error!("the capture cell supports unix and Windows only");

/// Standard input, output and error as C runtime descriptor numbers (the same on both platforms).
const STDIN: i32 = 0;
const STDOUT: i32 = 1;
const STDERR: i32 = 2;

/// What the cell was doing, for [`CaptureError::Descriptor`].
const BEGIN: &str = "begin a capture";
const END_CAPTURE: &str = "restore fds 1 and 2 after a capture";
const PROTECT: &str = "protect stdio";
const END_PROTECTION: &str = "restore fds 0 and 1 after protecting stdio";

/// Chunk size for streaming a capture (reads and the buffered writer).
const CHUNK: usize = 64 * 1024;

/// Errors of the capture layer. Every message names the mechanism that failed and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureError {
    /// [`Capture::begin`] while another capture is active.
    #[error(
        "capture refused: a capture is already active (captures must not nest or run \
         concurrently); finish or drop the active capture first"
    )]
    AlreadyActive,
    /// [`ProtectedStdio::install`] while a `ProtectedStdio` is alive.
    #[error(
        "stdio protection refused: the protocol streams are already protected (install \
         ProtectedStdio once; dropping it restores fds 0 and 1)"
    )]
    AlreadyProtected,
    /// [`ProtectedStdio::install`] while a capture is active.
    #[error(
        "stdio protection refused: a capture is active (install ProtectedStdio before the first \
         capture begins, not inside one)"
    )]
    CaptureActive,
    /// [`ProtectedStdio::install`] found fd 1 closed: there is no protocol output.
    #[error(
        "cannot protect stdio: fd 1 (the protocol output) is closed; start the server with its \
         standard output connected to the client"
    )]
    StdoutClosed,
    /// The temporary capture file could not be created.
    #[error(
        "cannot create capture file in $TMPDIR={}: {source}; set TMPDIR to a writable directory",
        dir.display()
    )]
    TempFile {
        /// The directory that was tried (`std::env::temp_dir()`).
        dir: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// A descriptor operation (`dup`, `dup2`, opening the null device, ...) failed.
    #[error(
        "cannot {action}: {op} failed: {source}; the process may be out of file descriptors \
         (raise the open-file limit) or a standard descriptor is unusable"
    )]
    Descriptor {
        /// What the cell was doing, e.g. "protect stdio".
        action: &'static str,
        /// The failing operation, e.g. "dup of fd 1".
        op: String,
        /// What the OS or the C runtime said.
        source: io::Error,
    },
    /// The size of the capture file could not be read back.
    #[error(
        "cannot read the size of the capture file: {source}; the temporary directory ($TMPDIR) \
         may have failed or been unmounted"
    )]
    CaptureFile {
        /// What the OS said.
        source: io::Error,
    },
    /// Windows: the UCRT functions could not be resolved from `ucrtbase.dll`.
    #[error(
        "cannot redirect stdio on Windows: {what} could not be resolved from ucrtbase.dll \
         (OS error {code}); mcpline needs the Universal C Runtime that CPython uses (part of \
         Windows 10 and later; install the UCRT update on older systems)"
    )]
    CrtUnavailable {
        /// The DLL or function that was missing.
        what: &'static str,
        /// `GetLastError()` at the failure.
        code: u32,
    },
}

/// Builds a [`CaptureError::Descriptor`] mapper for `map_err`.
fn descriptor(
    action: &'static str,
    op: impl fmt::Display,
) -> impl FnOnce(io::Error) -> CaptureError {
    move |source| CaptureError::Descriptor {
        action,
        op: op.to_string(),
        source,
    }
}

/// Saved copies of fds 1 and 2 while a capture is active.
#[derive(Debug)]
struct CaptureSaved {
    out: sys::SavedFd,
    err: sys::SavedFd,
}

/// Saved copies of fds 0 and 1 while stdio is protected.
#[derive(Debug)]
struct ProtectSaved {
    input: sys::SavedFd,
    output: sys::SavedFd,
}

/// The process-wide state of the cell. Every descriptor change happens under its lock.
struct Cell {
    capture: Option<CaptureSaved>,
    protect: Option<ProtectSaved>,
    /// An empty capture file kept for the next capture.
    spare: Option<File>,
    /// While stdio is protected: the copies of fds 1 and 2 that the last capture restored,
    /// kept for the next capture instead of copying and closing them every time.
    home: Option<CaptureSaved>,
    /// Parked between two captures (see [`Capture::finish_or_park`]): fds 1 and 2 still point
    /// at this empty file, and `home` holds what they must point at otherwise.
    parked: Option<File>,
}

static CELL: Mutex<Cell> = Mutex::new(Cell {
    capture: None,
    protect: None,
    spare: None,
    home: None,
    parked: None,
});
static CAPTURING: AtomicBool = AtomicBool::new(false);
static PROTECTED: AtomicBool = AtomicBool::new(false);
static PARKED: AtomicBool = AtomicBool::new(false);

/// Locks the cell. Nothing panics while holding the lock, but a poisoned lock is still usable:
/// the state it guards is always consistent between operations.
fn cell() -> MutexGuard<'static, Cell> {
    lock(&CELL)
}

/// Is fd 1/2 currently redirected into a capture file?
#[must_use]
pub fn is_capturing() -> bool {
    CAPTURING.load(Ordering::Acquire)
}

/// Returns a close-on-exec copy of standard descriptor `fd`, parking the null device on it first
/// if it is closed.
fn save(fd: i32, action: &'static str) -> Result<sys::SavedFd, CaptureError> {
    if let Some(saved) =
        sys::try_save(fd).map_err(descriptor(action, format_args!("dup of fd {fd}")))?
    {
        return Ok(saved);
    }
    sys::point_at_null(fd).map_err(descriptor(
        action,
        format_args!("parking the null device on closed fd {fd}"),
    ))?;
    sys::try_save(fd)
        .map_err(descriptor(action, format_args!("dup of fd {fd}")))?
        .ok_or_else(|| CaptureError::Descriptor {
            action,
            op: format!("dup of fd {fd}"),
            source: io::Error::new(io::ErrorKind::NotFound, "descriptor closed again at once"),
        })
}

/// The size of a capture file, by seeking its (shared) offset to the end.
///
/// Cheaper than `metadata()` (one `lseek` instead of a `statx`, paid twice per tool call), and
/// harmless: fds 1 and 2 share this offset, and the next write belongs at the end anyway.
fn file_len(mut file: &File) -> io::Result<u64> {
    file.seek(SeekFrom::End(0))
}

/// Takes the spare capture file if it is still empty, or creates a fresh unlinked one.
fn capture_file(spare: &mut Option<File>) -> Result<File, CaptureError> {
    if let Some(file) = spare.take() {
        if file_len(&file).is_ok_and(|len| len == 0) {
            return Ok(file);
        }
    }
    let file = tempfile::tempfile().map_err(|source| CaptureError::TempFile {
        dir: std::env::temp_dir(),
        source,
    })?;
    sys::off_standard_fds(file).map_err(descriptor(BEGIN, "moving the capture file off fd 0"))
}

/// Restores fds 1 and 2 if a capture is active. Idempotent.
fn end_capture(cell: &mut Cell) -> Result<(), CaptureError> {
    let Some(saved) = cell.capture.take() else {
        return Ok(());
    };
    sys::flush_c_stdio();
    let restored = restore_streams(&saved);
    CAPTURING.store(false, Ordering::Release);
    if cell.protect.is_some() && restored.is_ok() {
        cell.home = Some(saved);
    }
    restored
}

/// Points fds 1 and 2 back at their saved copies (both are attempted).
fn restore_streams(saved: &CaptureSaved) -> Result<(), CaptureError> {
    let out = sys::restore(STDOUT, &saved.out).map_err(descriptor(END_CAPTURE, "dup2 onto fd 1"));
    let err = sys::restore(STDERR, &saved.err).map_err(descriptor(END_CAPTURE, "dup2 onto fd 2"));
    out.and(err)
}

/// Points fds 1 and 2 back at their real targets if a capture left them parked. Bytes that
/// reached the parked file belong to no call: they are passed on to the real stderr as they are.
fn unpark(cell: &mut Cell) -> Result<(), CaptureError> {
    let Some(file) = cell.parked.take() else {
        return Ok(());
    };
    PARKED.store(false, Ordering::Release);
    sys::flush_c_stdio();
    // Parking keeps the real copies in `home`, so it is always there.
    let restored = cell.home.as_ref().map_or(Ok(()), restore_streams);
    let len = file_len(&file).unwrap_or(0);
    if len > 0 {
        let stray = Captured {
            file: Some(file),
            len,
        };
        let _ = stray.copy_labelled("", &mut io::stderr().lock());
    } else if cell.spare.is_none() {
        cell.spare = Some(file);
    }
    restored
}

/// Restores fds 0 and 1 if stdio is protected. Idempotent.
fn end_protection(cell: &mut Cell) -> Result<(), CaptureError> {
    if cell.protect.is_none() {
        return Ok(());
    }
    let unparked = unpark(cell);
    let Some(ProtectSaved { input, output }) = cell.protect.take() else {
        return unparked;
    };
    cell.home = None;
    sys::flush_c_stdio();
    let input_restored =
        sys::restore(STDIN, &input).map_err(descriptor(END_PROTECTION, "dup2 onto fd 0"));
    let output_restored = match cell.capture.as_mut() {
        // fd 1 is redirected into a capture right now: hand the real stdout to the capture, whose
        // end then restores fd 1 to it (the copy of stderr it saved is closed here).
        Some(capture) => {
            capture.out = output;
            Ok(())
        }
        None => sys::restore(STDOUT, &output).map_err(descriptor(END_PROTECTION, "dup2 onto fd 1")),
    };
    PROTECTED.store(false, Ordering::Release);
    unparked.and(input_restored).and(output_restored)
}

/// One capture of fds 1 and 2 into a fresh unlinked temporary file (mode 0600, in `$TMPDIR`,
/// see [`std::env::temp_dir`]).
///
/// Only one `Capture` exists process-wide at a time. Dropping it without [`Capture::finish`]
/// (panic, early return) restores fds 1 and 2 and discards the output.
#[derive(Debug)]
#[must_use = "dropping a Capture restores fds 1 and 2 at once and discards what it captured"]
pub struct Capture {
    /// The reading handle of the capture file (close-on-exec); `None` once finished.
    file: Option<File>,
}

impl Capture {
    /// Flushes C stdio, then points fds 1 and 2 at a fresh capture file.
    ///
    /// The caller flushes language-level buffers (Python's `sys.stdout`/`sys.stderr`) first.
    ///
    /// # Errors
    ///
    /// [`CaptureError::AlreadyActive`] if a capture is active (it is left untouched);
    /// [`CaptureError::TempFile`] if the capture file cannot be created;
    /// [`CaptureError::Descriptor`] if a descriptor cannot be copied or redirected (nothing is
    /// left redirected then); [`CaptureError::CrtUnavailable`] on Windows without the UCRT.
    pub fn begin() -> Result<Self, CaptureError> {
        let mut cell = cell();
        if cell.capture.is_some() {
            return Err(CaptureError::AlreadyActive);
        }
        sys::init()?;
        sys::flush_c_stdio();
        // fds 1 and 2 still point at the last capture's empty file: take it over as it is.
        let reusable = cell.home.is_some()
            && cell
                .parked
                .as_ref()
                .is_some_and(|file| file_len(file).is_ok_and(|len| len == 0));
        if reusable {
            PARKED.store(false, Ordering::Release);
            cell.capture = cell.home.take();
            CAPTURING.store(true, Ordering::Release);
            return Ok(Self {
                file: cell.parked.take(),
            });
        }
        // Written to since it was parked (or nothing parked): unpark, passing those bytes on.
        unpark(&mut cell)?;
        // Save first: once fds 1 and 2 are known to be open, the capture file cannot land on them.
        let CaptureSaved { out, err } = match cell.home.take() {
            Some(home) => home,
            None => CaptureSaved {
                out: save(STDOUT, BEGIN)?,
                err: save(STDERR, BEGIN)?,
            },
        };
        let file = capture_file(&mut cell.spare)?;
        let redirected = sys::file_fd(&file)
            .map_err(descriptor(
                BEGIN,
                "making a descriptor for the capture file",
            ))
            .and_then(|target| {
                sys::redirect(STDOUT, &target).map_err(descriptor(BEGIN, "dup2 onto fd 1"))?;
                sys::redirect(STDERR, &target).map_err(descriptor(BEGIN, "dup2 onto fd 2"))
            });
        if let Err(error) = redirected {
            // Undo whatever part happened; pointing an untouched fd at its own copy is harmless.
            let _ = sys::restore(STDOUT, &out);
            let _ = sys::restore(STDERR, &err);
            return Err(error);
        }
        cell.capture = Some(CaptureSaved { out, err });
        CAPTURING.store(true, Ordering::Release);
        Ok(Self { file: Some(file) })
    }

    /// Flushes C stdio, restores fds 1 and 2, and hands back the captured bytes (they stay in
    /// the file; nothing is read into memory here).
    ///
    /// The caller flushes language-level buffers first.
    ///
    /// # Errors
    ///
    /// [`CaptureError::Descriptor`] if a descriptor cannot be restored (both are attempted);
    /// [`CaptureError::CaptureFile`] if the size of the capture file cannot be read.
    pub fn finish(mut self) -> Result<Captured, CaptureError> {
        let mut cell = cell();
        let restored = end_capture(&mut cell);
        let file = self.file.take();
        restored?;
        let Some(file) = file else {
            return Ok(Captured { file: None, len: 0 });
        };
        let len = file_len(&file).map_err(|source| CaptureError::CaptureFile { source })?;
        if len == 0 {
            if cell.spare.is_none() {
                cell.spare = Some(file);
            }
            return Ok(Captured { file: None, len: 0 });
        }
        Ok(Captured {
            file: Some(file),
            len,
        })
    }

    /// Like [`Capture::finish`], except that an empty capture, while stdio is protected, leaves
    /// fds 1 and 2 parked on its file for the next [`Capture::begin`], which then redirects
    /// nothing: a server running calls back to back pays no `dup2` for the quiet ones.
    ///
    /// Parked descriptors must not outlive the moment they are useful: [`Capture::unpark`] (or
    /// the next `begin`, or the end of the protection) points them back, and passes on whatever
    /// reached the parked file in between to the real stderr.
    ///
    /// # Errors
    ///
    /// As [`Capture::finish`].
    pub fn finish_or_park(mut self) -> Result<Captured, CaptureError> {
        let mut cell = cell();
        let parkable = cell.protect.is_some() && cell.parked.is_none() && cell.capture.is_some();
        if parkable {
            if let Some(file) = self.file.take() {
                sys::flush_c_stdio();
                if file_len(&file).is_ok_and(|len| len == 0) {
                    cell.home = cell.capture.take();
                    cell.parked = Some(file);
                    CAPTURING.store(false, Ordering::Release);
                    PARKED.store(true, Ordering::Release);
                    return Ok(Captured { file: None, len: 0 });
                }
                self.file = Some(file);
            }
        }
        drop(cell);
        self.finish()
    }

    /// Points fds 1 and 2 back at their real targets if a finished capture left them parked
    /// (see [`Capture::finish_or_park`]); does nothing otherwise.
    ///
    /// # Errors
    ///
    /// [`CaptureError::Descriptor`] if a descriptor cannot be restored (both are attempted).
    pub fn unpark() -> Result<(), CaptureError> {
        if !is_parked() {
            return Ok(());
        }
        unpark(&mut cell())
    }
}

/// Writes `bytes` to the process's real stderr, also while a capture (running or parked) holds
/// fd 2: a log line written from another thread during a tool call never lands in that call's
/// captured output. Without a capture this is a plain write to fd 2.
///
/// # Errors
///
/// Copying the saved descriptor or writing failed.
pub fn write_real_stderr(bytes: &[u8]) -> io::Result<()> {
    let private = {
        let cell = cell();
        let saved = match (&cell.capture, &cell.parked) {
            (Some(active), _) => Some(&active.err),
            (None, Some(_)) => cell.home.as_ref().map(|home| &home.err),
            (None, None) => None,
        };
        // A private copy, written outside the lock: a stderr nobody reads must not block the
        // next capture.
        saved.map(sys::private_file).transpose()?
    };
    match private {
        Some(mut file) => file.write_all(bytes),
        None => io::stderr().write_all(bytes),
    }
}

/// Whether a finished capture left fds 1 and 2 parked on its file.
#[must_use]
pub fn is_parked() -> bool {
    PARKED.load(Ordering::Acquire)
}

impl Drop for Capture {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            // Errors cannot be reported from Drop; both descriptors are attempted regardless.
            let _ = end_capture(&mut cell());
        }
    }
}

/// The bytes of one finished capture. They live in the (unlinked) capture file, which is closed
/// when this value is dropped.
#[derive(Debug)]
pub struct Captured {
    /// `None` for an empty capture (its file went back to be reused).
    file: Option<File>,
    /// Size of the file when the capture finished; later writes by lingering children are ignored.
    len: u64,
}

impl Captured {
    /// Total bytes captured.
    #[must_use]
    pub const fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was captured.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The last `limit` bytes as text (lossy UTF-8), prefixed by
    /// `"[… N earlier bytes not shown …]\n"` when earlier bytes were left out.
    ///
    /// The cut never splits a character: continuation bytes at the cut are left out too (and
    /// counted in `N`), so the text after the marker holds at most `limit` captured bytes. Only
    /// the tail is read from the file. A read error is reported inside the text.
    #[must_use]
    pub fn tail_text(&self, limit: usize) -> String {
        let Some(file) = &self.file else {
            return String::new();
        };
        let start = self
            .len
            .saturating_sub(u64::try_from(limit).unwrap_or(u64::MAX));
        let Ok(want) = usize::try_from(self.len - start) else {
            return String::new(); // unreachable: at most `limit`
        };
        let mut buf = vec![0; want];
        if let Err(error) = read_exact_at(file, &mut buf, start) {
            return format!("[… capture file unreadable: {error} …]\n");
        }
        let skip = if start > 0 {
            buf.iter()
                .take(3)
                .take_while(|&&byte| is_utf8_continuation(byte))
                .count()
        } else {
            0
        };
        let hidden = start + skip as u64;
        let body = String::from_utf8_lossy(&buf[skip..]);
        if hidden == 0 {
            body.into_owned()
        } else {
            format!("[… {hidden} earlier bytes not shown …]\n{body}")
        }
    }

    /// Streams the whole capture to `out` in bounded chunks, each line prefixed with `label`
    /// (e.g. `"[count_words #7] "`), ending with a newline if the capture did not. Bytes are
    /// copied as they are (no UTF-8 decoding). Memory stays bounded (two 64 KiB buffers)
    /// whatever the size. An empty capture writes nothing.
    ///
    /// # Errors
    ///
    /// Reading the capture file or writing to `out` failed.
    pub fn copy_labelled(&self, label: &str, out: &mut dyn Write) -> io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut out = BufWriter::with_capacity(CHUNK, out);
        let mut buf = vec![0; CHUNK];
        let mut offset = 0;
        let mut at_line_start = true;
        while offset < self.len {
            let want = usize::try_from(self.len - offset).map_or(CHUNK, |left| left.min(CHUNK));
            let read = read_at(file, &mut buf[..want], offset)?;
            if read == 0 {
                break; // the file shrank: nothing more to copy
            }
            offset += read as u64;
            let mut rest = &buf[..read];
            while !rest.is_empty() {
                if at_line_start {
                    out.write_all(label.as_bytes())?;
                }
                if let Some(end) = rest.iter().position(|&byte| byte == b'\n') {
                    out.write_all(&rest[..=end])?;
                    rest = &rest[end + 1..];
                    at_line_start = true;
                } else {
                    out.write_all(rest)?;
                    rest = &[];
                    at_line_start = false;
                }
            }
        }
        if !at_line_start {
            out.write_all(b"\n")?;
        }
        out.flush()
    }

    /// Reads the whole capture into memory (size it with [`Captured::len`] first).
    ///
    /// # Errors
    ///
    /// Reading the capture file failed.
    pub fn read_all(&self) -> io::Result<Vec<u8>> {
        let Some(file) = &self.file else {
            return Ok(Vec::new());
        };
        let len = usize::try_from(self.len)
            .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "capture too large"))?;
        let mut buf = vec![0; len];
        read_exact_at(file, &mut buf, 0)?;
        Ok(buf)
    }
}

const fn is_utf8_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// Positional read that does not move the shared file offset on unix (fds 1 and 2 share it).
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

/// Positional read. On Windows this moves the file pointer, which only matters to a child that
/// outlived its capture and still writes to it.
#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(read) => {
                buf = &mut buf[read..];
                offset += read as u64;
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Moves the protocol streams onto private descriptors and makes fds 0 and 1 harmless: fd 0
/// reads the null device (a tool calling `input()` gets end-of-file at once) and fd 1 is a copy
/// of the real stderr (stray prints go to the log).
///
/// Dropping it (or [`ProtectedStdio::restore`]) flushes C stdio and restores fds 0 and 1 to what
/// they were, so a program can keep using stdout after the server returns. Dropped while a
/// capture is active, it restores fd 0 at once and fd 1 when the capture ends.
#[derive(Debug)]
#[must_use = "dropping ProtectedStdio restores fds 0 and 1 at once"]
pub struct ProtectedStdio {
    /// (protocol input, protocol output) until they are taken.
    streams: Option<(File, File)>,
}

impl ProtectedStdio {
    /// Flushes C stdio, copies the real stdin and stdout to private descriptors, points fd 0 at
    /// the null device and fd 1 at a copy of fd 2. A closed stdin gives a protocol input at
    /// end-of-file; a closed stderr gets the null device parked on it.
    ///
    /// The caller flushes language-level buffers (Python's `sys.stdout`) first.
    ///
    /// # Errors
    ///
    /// [`CaptureError::AlreadyProtected`], [`CaptureError::CaptureActive`],
    /// [`CaptureError::StdoutClosed`], [`CaptureError::Descriptor`] (nothing is left changed then
    /// except a null device parked on a closed fd) and, on Windows,
    /// [`CaptureError::CrtUnavailable`].
    pub fn install() -> Result<Self, CaptureError> {
        let mut cell = cell();
        if cell.protect.is_some() {
            return Err(CaptureError::AlreadyProtected);
        }
        if cell.capture.is_some() {
            return Err(CaptureError::CaptureActive);
        }
        sys::init()?;
        sys::flush_c_stdio();
        // fd 1 becomes a copy of fd 2, so fd 2 must be open (this parks the null device if not).
        drop(save(STDERR, PROTECT)?);
        let output = sys::try_save(STDOUT)
            .map_err(descriptor(PROTECT, "dup of fd 1"))?
            .ok_or(CaptureError::StdoutClosed)?;
        let input = save(STDIN, PROTECT)?;
        let protocol_input =
            sys::private_file(&input).map_err(descriptor(PROTECT, "private copy of fd 0"))?;
        let protocol_output =
            sys::private_file(&output).map_err(descriptor(PROTECT, "private copy of fd 1"))?;
        sys::point_at_null(STDIN)
            .map_err(descriptor(PROTECT, "pointing fd 0 at the null device"))?;
        if let Err(error) = sys::copy_fd(STDERR, STDOUT) {
            let _ = sys::restore(STDIN, &input);
            return Err(descriptor(PROTECT, "dup2 of fd 2 onto fd 1")(error));
        }
        cell.protect = Some(ProtectSaved { input, output });
        PROTECTED.store(true, Ordering::Release);
        Ok(Self {
            streams: Some((protocol_input, protocol_output)),
        })
    }

    /// Takes the protocol streams: `(input, output)`, private close-on-exec copies of the real
    /// stdin and stdout. They are independent descriptors owned by the caller and stay valid
    /// after this guard is dropped (so the server can finish writing, and the guard can be
    /// dropped first).
    ///
    /// # Panics
    ///
    /// If the streams were already taken (see [`ProtectedStdio::try_take_streams`]).
    pub fn take_streams(&mut self) -> (File, File) {
        self.try_take_streams()
            .expect("ProtectedStdio::take_streams called twice")
    }

    /// Like [`ProtectedStdio::take_streams`], but `None` after the first call.
    pub fn try_take_streams(&mut self) -> Option<(File, File)> {
        self.streams.take()
    }

    /// Whether a `ProtectedStdio` is installed in this process.
    #[must_use]
    pub fn is_installed() -> bool {
        PROTECTED.load(Ordering::Acquire)
    }

    /// Restores fds 0 and 1 now, reporting failure (dropping restores silently).
    ///
    /// # Errors
    ///
    /// [`CaptureError::Descriptor`] if a descriptor cannot be restored (both are attempted).
    pub fn restore(self) -> Result<(), CaptureError> {
        end_protection(&mut cell())
    }
}

impl Drop for ProtectedStdio {
    fn drop(&mut self) {
        // Errors cannot be reported from Drop; both descriptors are attempted regardless.
        let _ = end_protection(&mut cell());
    }
}
