//! The unix half of the capture cell: `fcntl(F_DUPFD_CLOEXEC)`, `dup2` and `fflush` of C's
//! `stdout` and `stderr`; and `_exit` for a forked child that must not go on serving.
//!
//! Only the standard descriptors 0, 1 and 2 are ever the target of a `dup2`. No Rust object owns
//! them as an `OwnedFd` (std's `Stdin`/`Stdout`/`Stderr` use the numbers without owning them), so
//! repointing them cannot violate I/O safety; the caller serialises every change through the
//! cell's lock.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

use super::CrtUnavailable;

/// How often `dup2` is retried on `EINTR`/`EBUSY` (Linux reports `EBUSY` when it races an `open`
/// that is about to install the target descriptor).
const DUP2_RETRIES: usize = 100;

/// Nothing to resolve on unix.
#[allow(
    clippy::unnecessary_wraps,
    reason = "same signature as the Windows half"
)]
pub(crate) fn init() -> Result<(), CrtUnavailable> {
    Ok(())
}

unsafe extern "C" {
    // C's standard streams (`<stdio.h>`); macOS spells them `__stdoutp`/`__stderrp`.
    #[cfg_attr(target_vendor = "apple", link_name = "__stdoutp")]
    static stdout: *mut libc::FILE;
    #[cfg_attr(target_vendor = "apple", link_name = "__stderrp")]
    static stderr: *mut libc::FILE;
}

/// Flushes C's `stdout` and `stderr`, the streams that write to fds 1 and 2.
///
/// Not `fflush(NULL)`: that locks every stream in turn, so it would wait for as long as another
/// thread sits in a C read (`fgets` on a socket or a pipe). A stream of its own that C code opened
/// on fd 1 or 2 (`fdopen`) is that code's to flush.
pub(crate) fn flush_c_stdio() {
    // SAFETY: `stdout` and `stderr` are libc's own stream pointers, initialised before any Rust
    // code runs and never freed; reading them copies a pointer. `fflush` on a valid stream locks
    // that stream itself; its failure (an unwritable stream) is not ours to report.
    unsafe {
        libc::fflush(stdout);
        libc::fflush(stderr);
    }
}

/// How many forks this process is removed from the one that first called [`fork_count`]: each
/// fork adds one in the child (a `pthread_atfork` handler), never in the parent.
static FORKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// How many times this process forked (in the parent) since [`fork_count`] was first called.
static FORKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

extern "C" fn count_fork_in_child() {
    FORKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

extern "C" fn count_fork_in_parent() {
    FORKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

fn watch_forks() {
    static WATCH: std::sync::Once = std::sync::Once::new();
    WATCH.call_once(|| {
        // SAFETY: registers a parent-side and a child-side handler that only increment an atomic
        // (async-signal safe, as a handler run after fork must be); the prepare handler is none.
        unsafe {
            libc::pthread_atfork(None, Some(count_fork_in_parent), Some(count_fork_in_child));
        }
    });
}

/// The fork count (see [`FORKS`]): a value that differs after a call from before it means the
/// code now running is a child forked during that call. No system call (unlike `getpid`).
pub(crate) fn fork_count() -> u64 {
    watch_forks();
    FORKS.load(std::sync::atomic::Ordering::Relaxed)
}

/// [`fork_count`] for a signal handler: a load, nothing that could take a lock.
pub(crate) fn forks_now() -> u64 {
    FORKS.load(std::sync::atomic::Ordering::Relaxed)
}

/// How many times this process has called `fork` (see [`FORKED`]). `vfork` and `posix_spawn`
/// run no fork handlers: language runtimes report those themselves (`capture::note_spawn`).
pub(crate) fn forked_count() -> u64 {
    watch_forks();
    FORKED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether this process has a child process (running, or ended and not yet waited for), asked
/// without waiting for or reaping any: catches what no fork handler or language runtime
/// reports, such as a C library's own `posix_spawn` or `vfork`.
pub(crate) fn has_children() -> bool {
    let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
    // SAFETY: waitid writes at most one siginfo_t into `info`, which lives across the call;
    // WNOHANG makes it return at once and WNOWAIT leaves every child waitable by its owner.
    let found = unsafe {
        libc::waitid(
            libc::P_ALL,
            0,
            info.as_mut_ptr(),
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    found == 0
}

/// Ends this process at once with `code`, running no exit handlers and flushing nothing: for a
/// forked child whose buffers are copies of its parent's.
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` takes only the status and never returns; skipping atexit handlers and
    // stdio flushing is the point.
    unsafe { libc::_exit(code) }
}

/// Writes (part of) `bytes` to descriptor `fd`, retried on `EINTR`; the count written.
pub(crate) fn write_fd(fd: RawFd, bytes: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `bytes` is a live slice that `write` only reads, `bytes.len()` long; a bad
        // `fd` yields EBADF.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if let Ok(written) = usize::try_from(written) {
            return Ok(written);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// A close-on-exec copy of a standard descriptor, closed when dropped.
#[derive(Debug)]
pub(crate) struct SavedFd(OwnedFd);

impl SavedFd {
    /// The descriptor number (for the fatal-signal handler, which cannot borrow).
    pub(crate) fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// A descriptor of the capture file that can be `dup2`-ed onto fds 1 and 2.
pub(crate) struct FileFd<'a>(BorrowedFd<'a>);

/// `fcntl(fd, F_DUPFD_CLOEXEC, 3)`: a close-on-exec copy numbered 3 or above, so that a copy
/// never lands on a standard descriptor that happens to be closed.
fn dup_cloexec(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC reads only the descriptor number and creates a new descriptor; an
    // invalid `fd` yields EBADF. No memory is passed.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` is a descriptor fcntl has just created for us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// `dup2(source, target)` for a standard `target`, retried on `EINTR`/`EBUSY`.
fn dup2(source: RawFd, target: RawFd) -> io::Result<()> {
    debug_assert!(
        (0..=2).contains(&target),
        "only standard descriptors are repointed"
    );
    let mut tries = 0;
    loop {
        // SAFETY: dup2 only edits the descriptor table. `target` is a standard descriptor that no
        // Rust object owns (see the module docs) and `source` is a descriptor the caller keeps
        // open for the duration of the call. No memory is passed.
        if unsafe { libc::dup2(source, target) } >= 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        tries += 1;
        match error.raw_os_error() {
            Some(libc::EINTR | libc::EBUSY) if tries < DUP2_RETRIES => {}
            _ => return Err(error),
        }
    }
}

/// A close-on-exec copy of standard descriptor `fd`, or `None` if `fd` is closed. `keep` matters
/// on Windows only: a `dup2` here closes no handle that other code could have cached.
pub(crate) fn try_save(fd: RawFd, _keep: bool) -> io::Result<Option<SavedFd>> {
    match dup_cloexec(fd) {
        Ok(owned) => Ok(Some(SavedFd(owned))),
        Err(error) if error.raw_os_error() == Some(libc::EBADF) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Nothing to release on unix (see `try_save`).
pub(crate) fn release_std_handle(_fd: RawFd) {}

/// Points standard descriptor `fd` (open or closed) at the null device, inheritable.
pub(crate) fn point_at_null(fd: RawFd) -> io::Result<()> {
    // std opens with O_CLOEXEC; the copy made by dup2 below is inheritable.
    let null = File::options().read(true).write(true).open("/dev/null")?;
    if null.as_raw_fd() != fd {
        return dup2(null.as_raw_fd(), fd);
    }
    // `fd` was closed and the lowest free number: the null device landed on it. Keep it there
    // (it now belongs to the process as a standard descriptor) and make it inheritable.
    let raw = null.into_raw_fd();
    // SAFETY: F_SETFD with 0 clears FD_CLOEXEC on `raw`, a descriptor we just opened and
    // released ownership of on purpose. No memory is passed.
    if unsafe { libc::fcntl(raw, libc::F_SETFD, 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Points standard descriptor `target` at what standard descriptor `source` points at.
pub(crate) fn copy_fd(source: RawFd, target: RawFd) -> io::Result<()> {
    dup2(source, target)
}

/// Points standard descriptor `fd` back at its saved copy.
pub(crate) fn restore(fd: RawFd, saved: &SavedFd) -> io::Result<()> {
    dup2(saved.0.as_raw_fd(), fd)
}

/// A private (close-on-exec) stream on what `saved` points at, owned by the caller.
pub(crate) fn private_file(saved: &SavedFd) -> io::Result<File> {
    dup_cloexec(saved.0.as_raw_fd()).map(File::from)
}

/// The descriptor to `dup2` onto fds 1 and 2: the capture file's own (a `dup2` copy is
/// inheritable even though the original is close-on-exec).
#[allow(
    clippy::unnecessary_wraps,
    reason = "same signature as the Windows half"
)]
pub(crate) fn file_fd(file: &File) -> io::Result<FileFd<'_>> {
    Ok(FileFd(file.as_fd()))
}

/// Moves `file` to a descriptor numbered 3 or above if it landed on a closed standard one (a
/// closed fd 0 is the lowest free number), which is then closed again.
pub(crate) fn off_standard_fds(file: File) -> io::Result<File> {
    if file.as_raw_fd() > 2 {
        return Ok(file);
    }
    dup_cloexec(file.as_raw_fd()).map(File::from)
}

/// What an open file is (device and inode), to tell whether two descriptors reach the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

/// The identity of `file` (Linux checks fds 1 and 2 with a mark after each call instead: see
/// [`super::is_marked`]).
pub(crate) fn file_id(file: &File) -> io::Result<FileId> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = file.metadata()?;
    Ok(FileId {
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

/// The identity of the file behind descriptor `fd` and its size, or `None` if `fd` is closed.
/// (Linux checks fds 1 and 2 with a mark after each call instead: see [`super::is_marked`].)
pub(crate) fn fd_file(fd: RawFd) -> Option<(FileId, u64)> {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes one `struct stat` into `stat`, a live value of that type; a closed
    // `fd` yields EBADF and writes nothing.
    if unsafe { libc::fstat(fd, stat.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: fstat succeeded, so it initialised the whole struct.
    let stat = unsafe { stat.assume_init() };
    // The conversion `MetadataExt::dev` and `ino` make (what `file_id` compares against):
    // `dev_t` is signed on macOS.
    #[allow(
        clippy::cast_sign_loss,
        clippy::unnecessary_cast,
        reason = "the field types differ between platforms"
    )]
    let id = FileId {
        dev: stat.st_dev as u64,
        ino: stat.st_ino as u64,
    };
    Some((id, u64::try_from(stat.st_size).unwrap_or(0)))
}

/// A fresh anonymous in-memory file (`memfd_create`, close-on-exec) for a capture: no disk, no
/// `$TMPDIR`, no directory entry, and cheap to create and to write. `None` where there is none
/// (not Linux, or a kernel without it): the caller falls back to a temporary file.
#[cfg(target_os = "linux")]
pub(crate) fn anonymous_file() -> Option<File> {
    // SAFETY: the name is a NUL-terminated C string literal; memfd_create only reads it and
    // returns a new descriptor (or -1) that nothing else owns.
    let fd = unsafe { libc::memfd_create(c"mcpline-capture".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just created for us and is owned by nothing else.
    Some(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// See the Linux version: other unix systems use a temporary file.
#[cfg(not(target_os = "linux"))]
pub(crate) const fn anonymous_file() -> Option<File> {
    None
}

/// A temporary file for a capture where there is no anonymous one, deleted once closed.
pub(crate) fn temp_file() -> io::Result<File> {
    tempfile::tempfile()
}

/// Gives back the room of bytes `..end` of `file` (they read as zeros afterwards; the size and
/// the offsets of later bytes stay): a hole punched with `fallocate`.
#[cfg(target_os = "linux")]
pub(crate) fn release_front(file: &File, end: u64) -> io::Result<()> {
    let len =
        libc::off_t::try_from(end).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: fallocate only changes the blocks of the descriptor `file` keeps open; no memory
    // is passed.
    let done = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            0,
            len,
        )
    };
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Gives back the room of the whole 4 KiB blocks of bytes `..end` of `file` (they read as
/// zeros afterwards; the size and the offsets of later bytes stay): a hole punched with
/// `F_PUNCHHOLE`, which APFS takes in whole blocks only. Other file systems refuse it, and the
/// drained bytes then keep their room.
#[cfg(target_os = "macos")]
pub(crate) fn release_front(file: &File, end: u64) -> io::Result<()> {
    let blocks = end & !4095;
    if blocks == 0 {
        return Ok(());
    }
    let range = libc::fpunchhole_t {
        fp_flags: 0,
        reserved: 0,
        fp_offset: 0,
        fp_length: libc::off_t::try_from(blocks)
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?,
    };
    // SAFETY: F_PUNCHHOLE reads one live, initialised fpunchhole_t and only changes the blocks
    // of the descriptor `file` keeps open.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_PUNCHHOLE, &raw const range) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Punching holes is implemented for Linux and macOS (elsewhere the drained bytes keep their
/// room).
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub(crate) fn release_front(_file: &File, _end: u64) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Makes every write through `file`'s descriptors (fds 1 and 2 included) land at the end of the
/// file, whatever another open of it (`> /dev/stderr` in a child) did to the size or offset.
pub(crate) fn set_append(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL read and set the status flags of a descriptor `file` keeps open;
    // no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_APPEND) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Points standard descriptor `fd` at the capture file.
pub(crate) fn redirect(fd: RawFd, file: &FileFd<'_>) -> io::Result<()> {
    dup2(file.0.as_raw_fd(), fd)
}
