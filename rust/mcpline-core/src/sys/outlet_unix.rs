//! The outlets of the capture cell (`capture::outlet`): open file descriptions of a capture
//! file that carry a lock the system keeps exactly as long as any descriptor of them is open,
//! in any process; and the mark that tells whether fds 1 and 2 still write through one.
//!
//! On Linux an outlet is the file opened anew through `/proc/self/fd` with an
//! open-file-description lock (`F_OFD_SETLK`). Where the file cannot be opened anew (macOS and
//! other unix systems, Linux without `/proc`) it is made with spare opens while it still has a
//! name, and an outlet is one of them with a shared `flock`.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
#[cfg(target_os = "linux")]
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
#[cfg(target_os = "linux")]
use std::os::unix::fs::OpenOptionsExt as _;

#[cfg(target_os = "linux")]
use super::fork_count;
use super::{off_standard_fds, set_append};

/// The signal number the capture cell sets on the open file description of each capture file
/// (`F_SETSIG`), so that one `fcntl` per descriptor tells whether fds 1 and 2 still share it.
/// No signal is ever sent: nothing opens these files for signal-driven I/O (`O_ASYNC`).
#[cfg(target_os = "linux")]
const MARK: libc::c_int = 60;
/// `F_SETSIG` and `F_GETSIG` from Linux's `<fcntl.h>` (the same on every architecture; the
/// `libc` crate does not export them).
#[cfg(target_os = "linux")]
const F_SETSIG: libc::c_int = 10;
#[cfg(target_os = "linux")]
const F_GETSIG: libc::c_int = 11;

/// Marks the open file description of `file` (see [`MARK`]): every descriptor sharing it, fds 1
/// and 2 pointed at it with `dup2` included, reads the mark back.
#[cfg(target_os = "linux")]
pub(crate) fn mark(file: &File) -> io::Result<()> {
    // SAFETY: F_SETSIG sets one integer of the open file description `file` keeps open; no
    // memory is passed.
    if unsafe { libc::fcntl(file.as_raw_fd(), F_SETSIG, MARK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether descriptor `fd` is open on a marked open file description (see [`mark`]). A file a
/// tool opened, or a closed descriptor, is not: only the capture cell marks, and only its own.
#[cfg(target_os = "linux")]
pub(crate) fn is_marked(fd: RawFd) -> bool {
    // SAFETY: F_GETSIG reads one integer of the open file description behind `fd` (or fails
    // with EBADF when `fd` is closed); no memory is passed.
    unsafe { libc::fcntl(fd, F_GETSIG) == MARK }
}

/// The byte range the outlet lock covers (see [`outlet`]): the capture file's first byte.
#[cfg(target_os = "linux")]
fn outlet_range(kind: libc::c_int) -> libc::flock {
    // SAFETY: `flock` is a plain C struct of integers, for which all zeros is a valid value.
    let mut range: libc::flock = unsafe { std::mem::zeroed() };
    #[allow(
        clippy::cast_possible_truncation,
        reason = "F_RDLCK, F_WRLCK and SEEK_SET are small constants"
    )]
    {
        range.l_type = kind as libc::c_short;
        range.l_whence = libc::SEEK_SET as libc::c_short;
    }
    range.l_start = 0;
    range.l_len = 1;
    range
}

/// `/proc/self/fd` opened once (`O_PATH`), with [`fork_count`] then: opening a capture file
/// anew through it costs 2 µs here, against 2.7 µs through the full path. A forked child's copy
/// names its parent's descriptors, so it opens the full path instead.
#[cfg(target_os = "linux")]
fn proc_fds() -> Option<RawFd> {
    let (dir, forks) = proc_fds_dir().as_ref()?;
    (*forks == fork_count()).then(|| dir.as_raw_fd())
}

#[cfg(target_os = "linux")]
fn proc_fds_dir() -> &'static Option<(OwnedFd, u64)> {
    static DIR: std::sync::OnceLock<Option<(OwnedFd, u64)>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = File::options()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
            .open("/proc/self/fd")
            .ok()?;
        Some((OwnedFd::from(off_standard_fds(dir).ok()?), fork_count()))
    })
}

/// Whether a capture file can be opened anew for its outlets ([`outlet`]): on Linux with
/// `/proc` mounted (asked again while the first open of `/proc/self/fd` failed, as it would
/// for want of descriptors). Elsewhere a capture file is made with the opens its outlets will
/// need ([`temp_file_with_opens`]).
pub(crate) fn reopens() -> bool {
    #[cfg(target_os = "linux")]
    {
        proc_fds_dir().is_some() || std::path::Path::new("/proc/self/fd").is_dir()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// A new open file description of `file` for fds 1 and 2 to write through (the outlet of
/// `capture::outlet`): `file` opened anew through `/proc/self/fd`, write-only and appending,
/// close-on-exec, numbered 3 or above, carrying an open-file-description lock on its first byte
/// (`F_OFD_SETLK`). The kernel drops that lock exactly when the last descriptor of this
/// description closes, in whichever process holds it; [`outlet_held`] asks whether it is
/// still there.
///
/// # Errors
///
/// `/proc` is not mounted, or the kernel (before 3.15) has no such locks.
#[cfg(target_os = "linux")]
pub(crate) fn outlet(file: &File) -> io::Result<File> {
    reopen(
        file,
        libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC,
        true,
    )
}

/// How much a pipe outlet holds ([`outlet_pipe`]), where the system allows it: the most an
/// unprivileged process may ask for by default.
#[cfg(target_os = "linux")]
const PIPE_HOLDS: libc::c_int = 1024 * 1024;

/// A pipe for fds 1 and 2 to write through (the pipe outlet of `capture::outlet`): its reading
/// end (non-blocking, close-on-exec, numbered 3 or above), holding 1 MiB where the system
/// allows it, and its writing outlet ([`pipe_outlet`]). Answers what the pipe holds too.
///
/// # Errors
///
/// No descriptors left, or `/proc` is not mounted.
#[cfg(target_os = "linux")]
pub(crate) fn outlet_pipe() -> io::Result<(File, File, usize)> {
    let (read, write) = super::output_pipe()?;
    let read = off_standard_fds(read)?;
    // SAFETY: F_SETPIPE_SZ and F_GETPIPE_SZ read only the descriptor number and an integer.
    let holds = unsafe {
        if libc::fcntl(read.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_HOLDS) < 0 {
            libc::fcntl(read.as_raw_fd(), libc::F_GETPIPE_SZ)
        } else {
            PIPE_HOLDS
        }
    };
    let outlet = pipe_outlet(&read)?;
    drop(write); // the outlet is the pipe's writer now
    Ok((read, outlet, usize::try_from(holds).unwrap_or(64 * 1024)))
}

/// A new writing open of the pipe whose reading end is `read`, made through `/proc/self/fd`
/// (close-on-exec, numbered 3 or above): the pipe's outlet for its next capture. (Opening a
/// pipe anew reaches the same pipe; a truncating open of it, `> /dev/stderr`, empties
/// nothing.) It needs no lock: the end of the pipe's input tells when no writer is left.
///
/// # Errors
///
/// `/proc` is not mounted, or no descriptors are left.
#[cfg(target_os = "linux")]
pub(crate) fn pipe_outlet(read: &File) -> io::Result<File> {
    reopen(read, libc::O_WRONLY | libc::O_CLOEXEC, false)
}

/// Tells whether a pipe holds anything or has lost its last writer, without the pipe's lock a
/// `read` takes: the pipe's reading end watched by the process's one `epoll` instance for pipe
/// outlets, asked without waiting. An empty pipe then costs one `epoll_wait` (about what an
/// `lseek` costs) instead of a `read` (half as much again), twice per quiet call. The watch
/// ends when this is dropped, which must happen while the reading end is still open.
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub(crate) struct PipeLook {
    epoll: RawFd,
    read: RawFd,
    /// [`fork_count`] when it was made: a forked child shares the instance, and its drop must
    /// not end the parent's watch.
    forks: u64,
}

/// The `epoll` instance watching every pipe outlet's reading end (made once, kept for the
/// process's lifetime; a forked child shares it, and never looks: its pipes are its parent's).
#[cfg(target_os = "linux")]
fn pipe_watcher() -> io::Result<RawFd> {
    static WATCHER: std::sync::OnceLock<Option<File>> = std::sync::OnceLock::new();
    let made = WATCHER.get_or_init(|| {
        // SAFETY: epoll_create1 reads only its flags; the new descriptor (or -1) is owned by
        // nothing else.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` was just created by epoll_create1 and nothing else owns it.
        off_standard_fds(File::from(unsafe { OwnedFd::from_raw_fd(fd) })).ok()
    });
    made.as_ref()
        .map(AsRawFd::as_raw_fd)
        .ok_or_else(|| io::Error::other("no epoll instance for pipe outlets"))
}

#[cfg(target_os = "linux")]
impl PipeLook {
    /// Watches the pipe whose reading end is `read`.
    ///
    /// # Errors
    ///
    /// No descriptors are left, or the system refused to watch the pipe.
    pub(crate) fn new(read: &File) -> io::Result<Self> {
        let epoll = pipe_watcher()?;
        // Level-triggered: asked again, it answers for the pipe as it is then. The end of its
        // input (`EPOLLHUP`) is always reported. The descriptor number tells the pipes apart.
        let mut watch = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: u64::try_from(read.as_raw_fd()).unwrap_or(u64::MAX),
        };
        // SAFETY: EPOLL_CTL_ADD reads one live, initialised `epoll_event`; the epoll instance
        // lives as long as the process, and `read` is kept open by its owner.
        let added = unsafe {
            libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, read.as_raw_fd(), &raw mut watch)
        };
        if added < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            epoll,
            read: read.as_raw_fd(),
            forks: fork_count(),
        })
    }

    /// Whether the pipe holds bytes, or its input has ended (also when the system cannot
    /// tell: the caller then reads, as it would without this).
    pub(crate) fn has_news(&self) -> bool {
        /// How many ready pipes one look lists; more, and this one is taken as ready.
        const LISTED: usize = 8;
        let mut seen = [libc::epoll_event { events: 0, u64: 0 }; LISTED];
        // SAFETY: epoll_wait writes at most LISTED events into `seen`, which lives across the
        // call; a timeout of 0 never blocks.
        let ready =
            unsafe { libc::epoll_wait(self.epoll, seen.as_mut_ptr(), LISTED as libc::c_int, 0) };
        let Ok(ready) = usize::try_from(ready) else {
            return true; // refused (interrupted): read
        };
        let key = u64::try_from(self.read).unwrap_or(u64::MAX);
        ready == LISTED || seen[..ready].iter().any(|event| event.u64 == key)
    }
}

#[cfg(target_os = "linux")]
impl Drop for PipeLook {
    fn drop(&mut self) {
        if self.forks != fork_count() {
            return;
        }
        // SAFETY: EPOLL_CTL_DEL reads only the two descriptor numbers (the event argument may
        // be null since Linux 2.6.9); the reading end is still open (see the type's docs).
        unsafe {
            libc::epoll_ctl(
                self.epoll,
                libc::EPOLL_CTL_DEL,
                self.read,
                std::ptr::null_mut(),
            );
        }
    }
}

/// Gives a pipe back the room a pipe has by default (64 KiB), where what it holds fits: a
/// pipe outlet that goes on being followed after its call (what 1 MiB pipes a user may have
/// is limited, for all of that user's processes).
#[cfg(target_os = "linux")]
pub(crate) fn shrink_pipe(read: &File) {
    // SAFETY: F_SETPIPE_SZ reads only the descriptor number and an integer.
    let _ = unsafe { libc::fcntl(read.as_raw_fd(), libc::F_SETPIPE_SZ, 64 * 1024) };
}

/// `file` opened anew through `/proc/self/fd` with `flags`, numbered 3 or above, carrying an
/// OFD lock on its first byte when `lock`.
#[cfg(target_os = "linux")]
fn reopen(file: &File, flags: libc::c_int, lock: bool) -> io::Result<File> {
    let opened = if let Some(dir) = proc_fds() {
        let name = std::ffi::CString::new(file.as_raw_fd().to_string())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: `name` is a NUL-terminated string that lives across the call and openat only
        // reads it; `dir` is the descriptor `proc_fds` keeps open for the process's lifetime.
        // The new descriptor (or -1) is owned by nothing else.
        let fd = unsafe { libc::openat(dir, name.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created by openat and nothing else owns it.
        File::from(unsafe { OwnedFd::from_raw_fd(fd) })
    } else {
        File::options()
            .write(true)
            .custom_flags(flags & !libc::O_WRONLY)
            .open(format!("/proc/self/fd/{}", file.as_raw_fd()))?
    };
    let opened = off_standard_fds(opened)?;
    if !lock {
        return Ok(opened);
    }
    let range = outlet_range(libc::F_WRLCK);
    // SAFETY: F_OFD_SETLK reads one live, initialised `flock` and sets a lock on the open file
    // description `opened` keeps open.
    if unsafe { libc::fcntl(opened.as_raw_fd(), libc::F_OFD_SETLK, &raw const range) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(opened)
}

/// Whether an outlet of `file` ([`outlet`] or [`lock_outlet`]) is still open anywhere: its
/// lock is still there, as seen through `file`'s own open file description (which holds no
/// lock).
///
/// # Errors
///
/// The system refused the query.
pub(crate) fn outlet_held(file: &File) -> io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        let mut probe = outlet_range(libc::F_RDLCK);
        // SAFETY: F_OFD_GETLK reads and rewrites one live, initialised `flock` (`l_pid` is 0, as
        // it must be); it sets no lock.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_GETLK, &raw mut probe) } < 0 {
            return Err(io::Error::last_os_error());
        }
        let locked = i32::from(probe.l_type) != libc::F_UNLCK;
        if locked || reopens() {
            return Ok(locked);
        }
    }
    // The lock of an outlet made by `temp_file_with_opens`: an exclusive `flock` is refused
    // while a shared one is held through another open file description.
    let fd = file.as_raw_fd();
    // SAFETY: flock sets or refuses a lock on the open file description behind `fd`, which
    // `file` keeps open; no memory is passed.
    if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        // SAFETY: as above; the lock just taken is dropped again.
        unsafe { libc::flock(fd, libc::LOCK_UN) };
        return Ok(false);
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(true)
    } else {
        Err(error)
    }
}

/// A temporary file for a capture (mode 0600, in `$TMPDIR`) and `opens` further open file
/// descriptions of it, appending and close-on-exec, numbered 3 or above, made while the file
/// still had its name, which is gone once this returns: the outlets of its captures, where a
/// file cannot be opened anew later ([`reopens`]). Each takes its lock when it becomes one
/// ([`lock_outlet`]).
///
/// Fewer opens than asked (none at all, for want of descriptors) are not an error: the file
/// then serves fewer captures, or captures whose ends go by what the cell saw.
///
/// # Errors
///
/// `$TMPDIR` refused the file.
pub(crate) fn temp_file_with_opens(opens: usize) -> io::Result<(File, Vec<File>)> {
    let named = tempfile::NamedTempFile::new()?;
    let mut outlets = Vec::with_capacity(opens);
    for _ in 0..opens {
        let Ok(opened) = named
            .reopen()
            .and_then(|opened| set_append(&opened).map(|()| opened))
            .and_then(off_standard_fds)
        else {
            break;
        };
        outlets.push(opened);
    }
    Ok((named.into_file(), outlets))
}

/// Makes `file` (one of the opens of [`temp_file_with_opens`]) an outlet: a shared `flock` on
/// its open file description. The system keeps that lock exactly as long as any descriptor of
/// the description is open, in whichever process holds it (BSD `flock` semantics, on macOS as
/// on Linux); [`outlet_held`] asks whether it is still there.
///
/// # Errors
///
/// The file system has no `flock` locks.
pub(crate) fn lock_outlet(file: &File) -> io::Result<()> {
    // SAFETY: flock sets a lock on the open file description `file` keeps open; no memory is
    // passed.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::{Read as _, Write as _};

    use super::{PipeLook, outlet_pipe};

    #[test]
    fn a_look_into_a_pipe_sees_bytes_and_the_end_of_its_input_and_nothing_else() {
        let (mut read, mut writer, _) = outlet_pipe().expect("a pipe outlet");
        let look = PipeLook::new(&read).expect("watch the pipe");
        assert!(!look.has_news(), "empty, with a writer");
        writer.write_all(b"x").expect("write");
        assert!(look.has_news(), "holds a byte");
        assert!(look.has_news(), "asked again, it still holds it");
        let mut byte = [0; 1];
        read.read_exact(&mut byte).expect("read");
        assert!(!look.has_news(), "emptied");
        drop(writer);
        assert!(look.has_news(), "no writer left");
    }

    #[test]
    fn a_forked_child_dropping_its_copy_of_a_look_leaves_the_parents_watch() {
        let (read, mut writer, _) = outlet_pipe().expect("a pipe outlet");
        let look = PipeLook::new(&read).expect("watch the pipe");
        // SAFETY: the child only drops its copy of `look` (a load and at most one epoll_ctl)
        // and ends with _exit, touching nothing another thread may have held at the fork.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork");
        if child == 0 {
            drop(look);
            // SAFETY: _exit ends the child at once.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: waitpid writes one integer into `status`, which lives across the call.
        assert_eq!(unsafe { libc::waitpid(child, &raw mut status, 0) }, child);
        writer.write_all(b"x").expect("write");
        assert!(look.has_news(), "the parent's pipe is still watched");
    }
}
