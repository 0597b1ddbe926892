//! What fds 1 and 2 write through during a capture, and whether anybody else still holds it
//! once the call is over.
//!
//! A child process inherits fds 1 and 2. While they point at the capture file, a child that
//! outlives its call can write there at any time, and a later call reusing the file would pass
//! those bytes off as its own. Children the language runtime reports are moved to a pipe
//! before they start (see `piped`); this module settles the rest: a process started from C
//! (`posix_spawn`, `vfork`, `clone`), one started while a tool had put fd 1 or 2 back on the
//! file, or a grandchild whose parent ended within the call (`system("daemon &")`).
//!
//! On Linux fds 1 and 2 do not share the cell's own open file description of the capture file.
//! They get one of their own, the *outlet*: the file opened anew through `/proc/self/fd`,
//! carrying an open-file-description lock (see `sys::outlet`). The kernel keeps such a lock
//! exactly as long as any descriptor of that description is open, in any process. So when a
//! call that may have started a process ends, the cell points fds 1 and 2 home, closes its own
//! descriptor of the outlet ([`Outlet::close`]) and asks, through its own description, whether
//! the lock is still there: one `fcntl(F_OFD_GETLK)`. If it is, somebody else holds the file,
//! which is then never reused, and is followed for late output until the lock goes
//! ([`still_held`]); if not, nobody can write there any more, and the next call reuses it.
//!
//! A call "may have started a process" when the runtime reported one, when its fds moved to a
//! pipe, or when it lasted at least `spawns::SPAWN_TAKES` (no process starts faster). Calls
//! shorter than that keep the outlet and park on it as before, paying nothing; the others pay
//! for a fresh outlet at the next capture (an `openat`, an `fcntl` and a `close`, about 3 µs).
//!
//! Elsewhere (macOS, other unix systems, Windows), or when `/proc` is not mounted, fds 1 and 2
//! write through the cell's own description and [`Outlet::close`] cannot tell: the cell then
//! goes by what it saw (reported processes, and processes the system shows started since, see
//! `spawns`). On Windows the process's job also tells when no process but this one runs
//! ([`alone`]): then nobody can hold any capture file, whichever call started them.

use std::fs::File;
use std::io;

use crate::sys;

/// The open file description fds 1 and 2 write through during a capture (see the module docs).
#[derive(Debug)]
pub(super) struct Outlet {
    /// The outlet's own descriptor (Linux), or `None`: fds 1 and 2 write through the capture
    /// file's own description.
    #[cfg(target_os = "linux")]
    own: Option<File>,
}

impl Outlet {
    /// An outlet for `file` (its own locked description where the system allows, see the
    /// module docs), marked for `capture::still_on` on Linux.
    pub(super) fn new(file: &File) -> Self {
        #[cfg(target_os = "linux")]
        {
            let own = sys::outlet(file).ok();
            // Without the mark a capture never parks (see `still_on`); it still captures.
            let _ = sys::mark(own.as_ref().unwrap_or(file));
            Self { own }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = file;
            Self {}
        }
    }

    /// Whether [`Outlet::close`] can tell if somebody else holds the outlet.
    pub(super) const fn can_tell(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.own.is_some()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }

    /// The descriptor to `dup2` onto fds 1 and 2 (`file` is the capture file it belongs to).
    pub(super) fn target<'a>(&'a self, file: &'a File) -> io::Result<sys::FileFd<'a>> {
        #[cfg(target_os = "linux")]
        if let Some(own) = &self.own {
            return sys::file_fd(own);
        }
        sys::file_fd(file)
    }

    /// Closes the outlet, once fds 1 and 2 point elsewhere: answers whether a process may still
    /// hold the capture file (a descriptor of the outlet is still open somewhere: a process
    /// that inherited fd 1 or 2), and whether that is known exactly. Where it cannot be told
    /// (no outlet of its own, see the module docs) a process may: `(true, false)`.
    pub(super) fn close(self, file: &File) -> (bool, bool) {
        #[cfg(target_os = "linux")]
        if let Some(own) = self.own {
            drop(own);
            if let Ok(held) = sys::outlet_held(file) {
                return (held, true);
            }
        }
        let _ = file;
        (true, false)
    }
}

/// Whether the closed outlet of `file` is still open somewhere (see [`Outlet::close`]): `None`
/// when that cannot be told.
pub(super) fn still_held(file: &File) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        sys::outlet_held(file).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// Whether no process but this one can hold any capture file now: on Windows, when no other
/// process runs in the process's job (see `sys::job_windows`); never elsewhere. Any file whose
/// call started a process is then free.
pub(super) fn alone() -> bool {
    #[cfg(windows)]
    {
        sys::alone_in_job()
    }
    #[cfg(not(windows))]
    {
        false
    }
}
