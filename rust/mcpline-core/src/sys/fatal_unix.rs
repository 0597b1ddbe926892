//! Fatal signals while a call runs: what the call had written is copied to the real stderr
//! before the process dies, and whatever is written after that (`faulthandler`'s traceback, the
//! C runtime's abort message) reaches the real stderr too, not the capture file that dies with
//! the process.
//!
//! The handler runs in signal context, so it only uses async-signal-safe calls (`pread`,
//! `write`, `dup2`, `sigaction`, `raise`) on descriptors published beforehand in atomics, and a
//! small buffer on its stack. It then hands the signal on: to the handler that was installed
//! before (e.g. `faulthandler`'s, which prints the Python traceback), else to the default
//! action, which ends the process as it would have without us.
#![allow(unsafe_code)]

use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, Ordering};

use libc::c_int;

use super::SavedFd;

/// The signals that end a process because of a fault in its own code.
const FATAL: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
];

/// Every line of the copied output starts with this (the label of the other exit paths).
const LABEL: &[u8] = b"[call still running at exit] ";

/// A descriptor that reads the active capture file, or -1.
static CAPTURE: AtomicI32 = AtomicI32::new(-1);
/// Where the bytes of the active capture begin (what the capture cap moved to the log earlier
/// is a hole of zeros now; while parked, the last call's bytes, already answered).
static START: AtomicI64 = AtomicI64::new(0);
/// A descriptor of the real stderr while fd 2 may point elsewhere, or -1 (fd 2 is the real one).
static REAL_STDERR: AtomicI32 = AtomicI32::new(-1);
/// The reading end of the pipe the running call writes through (non-blocking), or -1.
static PIPE: AtomicI32 = AtomicI32::new(-1);
/// Set while a fatal signal is handled: the pump stops taking bytes out of the pipe (see
/// [`dying`]), so what is still there stays for the handler to copy, in order.
static DYING: AtomicBool = AtomicBool::new(false);
/// The fork count (see `super::fork_count`) of the process that published [`PIPE`]: a forked
/// child's copy of it is its parent's to read.
static PIPE_FORKS: AtomicU64 = AtomicU64::new(0);
/// The handlers installed before ours, in the order of [`FATAL`].
static PREVIOUS: OnceLock<[libc::sigaction; FATAL.len()]> = OnceLock::new();

/// Tells the handler where the running capture (its file, and where its bytes begin) and the
/// real stderr are (`None`: no capture / fd 2 is the real stderr). The descriptors must stay
/// open until published again.
pub(crate) fn publish_for_fatal(capture: Option<(&File, u64)>, real_stderr: Option<&SavedFd>) {
    publish_capture_start(capture.map_or(0, |(_, start)| start));
    CAPTURE.store(
        capture.map_or(-1, |(file, _)| file.as_raw_fd()),
        Ordering::Release,
    );
    REAL_STDERR.store(real_stderr.map_or(-1, SavedFd::raw), Ordering::Release);
}

/// Tells the handler which pipe the running call writes through now (`-1`: none): what is
/// still in it follows the capture file's bytes. The descriptor must stay open until
/// published again.
pub(crate) fn publish_pipe_for_fatal(pipe: c_int) {
    PIPE_FORKS.store(super::fork_count(), Ordering::Release);
    PIPE.store(pipe, Ordering::Release);
}

/// Whether a fatal signal is being handled: the thread that empties a call's pipe into its
/// capture file stops, leaving the rest to the handler.
pub(crate) fn dying() -> bool {
    DYING.load(Ordering::Acquire)
}

/// The bytes of the active capture now begin at `start` (the cap moved the rest to the log).
pub(crate) fn publish_capture_start(start: u64) {
    START.store(i64::try_from(start).unwrap_or(i64::MAX), Ordering::Release);
}

/// Installs the handler for the fatal signals, once per process (a server calls it when it
/// starts to serve). A handler installed later (by a tool) runs first and hands the signal on
/// to ours, if it chains as `faulthandler` does.
pub(crate) fn catch_fatal_signals() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: a zeroed `sigaction` is a valid "default action, empty mask" value; each
        // `sigaction` call reads ours and writes the previous one into `previous[i]`, both live
        // locals. The handler only uses async-signal-safe calls (see the module docs).
        unsafe {
            let mut ours: libc::sigaction = std::mem::zeroed();
            ours.sa_sigaction = on_fatal
                as extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as libc::sighandler_t;
            ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&raw mut ours.sa_mask);
            let mut previous: [libc::sigaction; FATAL.len()] = std::mem::zeroed();
            for (signal, old) in FATAL.iter().zip(previous.iter_mut()) {
                if libc::sigaction(*signal, &raw const ours, old) != 0 {
                    old.sa_sigaction = libc::SIG_DFL;
                }
            }
            let _ = PREVIOUS.set(previous);
        }
    });
}

/// Writes all of `bytes` to `fd`, giving up on an error (signal context: nothing to report to).
fn write_all(fd: c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a live slice `write` only reads.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        match usize::try_from(written) {
            Ok(n) if n > 0 => bytes = &bytes[n..],
            _ => {
                if written < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                    continue;
                }
                return;
            }
        }
    }
}

/// Writes `n` in decimal to `fd` without allocating.
fn write_number(fd: c_int, mut n: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    write_all(fd, &digits[at..]);
}

/// How many reads of [`copy_labelled`]'s buffer take what the largest pipe holds, and a little.
const PIPE_READS: usize = (1024 * 1024 + 64 * 1024) / 1024;

/// Copies the capture file read through `capture` to `err`, each line labelled.
/// Then what is still in the pipe the call writes through, if any (read without waiting).
fn copy_labelled(capture: c_int, err: c_int) {
    let mut buf = [0u8; 1024];
    let mut offset: libc::off_t = START.load(Ordering::Acquire);
    let mut at_line_start = true;
    loop {
        // SAFETY: `buf` is a live local `pread` writes at most `buf.len()` bytes into.
        let read = unsafe { libc::pread(capture, buf.as_mut_ptr().cast(), buf.len(), offset) };
        let Ok(read) = usize::try_from(read) else {
            break;
        };
        if read == 0 {
            break;
        }
        offset += read as libc::off_t;
        super::write_labelled(&buf[..read], LABEL, &mut at_line_start, &mut |bytes| {
            write_all(err, bytes);
        });
    }
    let ours = PIPE_FORKS.load(Ordering::Acquire) == super::forks_now();
    let pipe = if ours {
        PIPE.load(Ordering::Acquire)
    } else {
        -1
    };
    // At most what a full pipe outlet holds (1 MiB) and a little more: a child that keeps
    // writing cannot hold the dying process here.
    for _ in 0..(if pipe >= 0 { PIPE_READS } else { 0 }) {
        // SAFETY: `buf` is a live local `read` writes at most `buf.len()` bytes into; the
        // pipe's reading end is non-blocking, so an empty pipe answers at once.
        let read = unsafe { libc::read(pipe, buf.as_mut_ptr().cast(), buf.len()) };
        let Ok(read @ 1..) = usize::try_from(read) else {
            break;
        };
        super::write_labelled(&buf[..read], LABEL, &mut at_line_start, &mut |bytes| {
            write_all(err, bytes);
        });
    }
    if !at_line_start {
        write_all(err, b"\n");
    }
}

extern "C" fn on_fatal(signal: c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let err = REAL_STDERR.load(Ordering::Acquire);
    let capture = CAPTURE.swap(-1, Ordering::AcqRel);
    DYING.store(true, Ordering::Release);
    if PIPE.load(Ordering::Acquire) >= 0 {
        // A move from the pipe to the file that began before the store above ends within
        // microseconds: let it land in the file before the file is copied.
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: 2_000_000,
        };
        // SAFETY: nanosleep is async-signal-safe; it reads one live timespec and is given no
        // remainder to write.
        unsafe {
            libc::nanosleep(&raw const pause, std::ptr::null_mut());
        }
    }
    if err >= 0 {
        if capture >= 0 {
            write_all(err, b"[mcpline] fatal signal ");
            write_number(err, signal.unsigned_abs());
            write_all(err, b" while a tool call ran; what it had written:\n");
            copy_labelled(capture, err);
        }
        // SAFETY: dup2 only edits the descriptor table; `err` stays open (it is published only
        // while the cell keeps it). Whatever is written after us reaches the real stderr.
        unsafe {
            libc::dup2(err, 1);
            libc::dup2(err, 2);
        }
    }
    // Should the process live on (a handler before ours recovers), the pipe flows again.
    DYING.store(false, Ordering::Release);
    hand_on(signal, info, context);
}

/// Reinstalls the handler that was there before ours and passes the signal to it (or to the
/// default action, raised again to take effect once this handler returns).
fn hand_on(signal: c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let previous = PREVIOUS
        .get()
        .and_then(|all| FATAL.iter().position(|&s| s == signal).map(|i| all[i]));
    // SAFETY: `previous` is a handler value the kernel gave us; reinstalling it and calling it
    // as it declares itself (SA_SIGINFO or not) with the arguments we were given is what the
    // kernel would have done. Without one, the default action is reinstated and the signal
    // raised again: it is blocked while we run and takes effect when we return.
    unsafe {
        match previous {
            Some(old) if old.sa_sigaction == libc::SIG_IGN => {
                libc::sigaction(signal, &raw const old, std::ptr::null_mut());
            }
            Some(old) if old.sa_sigaction != libc::SIG_DFL => {
                libc::sigaction(signal, &raw const old, std::ptr::null_mut());
                if old.sa_flags & libc::SA_SIGINFO != 0 {
                    let handler: extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(old.sa_sigaction);
                    handler(signal, info, context);
                } else {
                    let handler: extern "C" fn(c_int) = std::mem::transmute(old.sa_sigaction);
                    handler(signal);
                }
            }
            _ => {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &raw const default, std::ptr::null_mut());
                libc::raise(signal);
            }
        }
    }
}
