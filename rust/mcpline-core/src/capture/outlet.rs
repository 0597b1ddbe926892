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
//! shorter than that keep the outlet and park on it as before, paying nothing; on Linux the
//! others pay for a fresh outlet at the next capture (an `openat`, an `fcntl` and a `close`,
//! about 3 µs).
//!
//! Where a file cannot be opened anew (macOS and other unix systems, Linux without `/proc`),
//! the capture file is a temporary file in `$TMPDIR` opened [`SPARE_OPENS`] more times while it
//! still has its name, which is then removed (`sys::temp_file_with_opens`). An outlet is one of
//! those opens with a shared `flock`, which the system likewise keeps as long as any
//! descriptor of that open file description is open; the cell asks by trying an exclusive
//! `flock` through its own description. Each call that asks uses up one open; a file whose
//! opens have run out is not reused, and the next capture gets a fresh file. One gap the OFD
//! lock does not have: a holder that takes and drops a `flock` of its own on fd 1 or 2 (to
//! serialise its writes with other processes) replaces the outlet's lock and then removes it,
//! after which its output may be taken for a later call's.
//!
//! On Windows fds 1 and 2 write through the file's own description and [`Outlet::close`]
//! cannot tell: the cell goes by what it saw (reported processes, and the processes started in
//! the process's job, see `spawns`), and the job also tells when no process but this one runs
//! ([`alone`]): then nobody can hold any capture file, whichever call started them. On unix
//! the same goes for a file without an outlet of its own: a lock refused (a file system
//! without `flock`, a kernel without OFD locks), `$TMPDIR` refusing the file made with spare
//! opens, or no descriptors left for them (see `spawns::started_a_process` for what the cell
//! then sees and misses).

use std::fs::File;
use std::io;

use crate::sys;

/// How many opens of a capture file are made for the outlets of its captures where it cannot be
/// opened anew (see the module docs): once a call has asked its outlet and the file is free,
/// the next capture's outlet is the next of them, and a file whose opens have run out is not
/// reused (the next capture gets a fresh one).
#[cfg(unix)]
pub(super) const SPARE_OPENS: usize = 8;

/// The open file description fds 1 and 2 write through during a capture (see the module docs).
#[derive(Debug)]
pub(super) struct Outlet {
    /// The outlet's own descriptor, or `None`: fds 1 and 2 write through the capture file's
    /// own description, and the outlet cannot tell.
    #[cfg(unix)]
    own: Option<File>,
    /// Further opens of the capture file for the outlets of its next captures, where it
    /// cannot be opened anew (empty where it can).
    #[cfg(unix)]
    spares: Vec<File>,
}

impl Outlet {
    /// An outlet for `file`: on Linux with `/proc`, its own locked description (see the module
    /// docs), marked for `capture::still_on`; elsewhere `None` on unix (the file's next outlet
    /// must come from its spare opens), one that cannot tell on Windows.
    pub(super) fn new(file: &File) -> Option<Self> {
        #[cfg(target_os = "linux")]
        {
            sys::reopens().then(|| Self::marked(sys::outlet(file).ok(), Vec::new(), file))
        }
        #[cfg(all(unix, not(target_os = "linux")))]
        {
            let _ = file;
            None
        }
        #[cfg(not(unix))]
        {
            let _ = file;
            Some(Self {})
        }
    }

    /// The outlet of the first capture of `file`, just made with `spares` (see `new_file`;
    /// none where it can be opened anew).
    pub(super) fn first(file: &File, spares: Vec<File>) -> Self {
        #[cfg(unix)]
        {
            if spares.is_empty() {
                if let Some(outlet) = Self::new(file) {
                    return outlet;
                }
            }
            Self::from_spares(spares, file)
        }
        #[cfg(not(unix))]
        {
            let _ = (file, spares);
            Self {}
        }
    }

    /// The outlet of `file`'s capture from the first of `spares`, opens of it made when it was
    /// created (see `sys::temp_file_with_opens`), with a shared `flock`; the rest are kept for
    /// its next captures.
    #[cfg(unix)]
    fn from_spares(mut spares: Vec<File>, file: &File) -> Self {
        let own = spares.pop().filter(|open| sys::lock_outlet(open).is_ok());
        if own.is_none() {
            // A file system that refuses the lock refuses it for every open.
            spares.clear();
        }
        Self::marked(own, spares, file)
    }

    #[cfg(unix)]
    fn marked(own: Option<File>, spares: Vec<File>, file: &File) -> Self {
        // Without the mark a capture never parks (see `still_on`); it still captures.
        #[cfg(target_os = "linux")]
        let _ = sys::mark(own.as_ref().unwrap_or(file));
        #[cfg(not(target_os = "linux"))]
        let _ = file;
        Self { own, spares }
    }

    /// Whether [`Outlet::close`] can tell if somebody else holds the outlet.
    pub(super) const fn can_tell(&self) -> bool {
        #[cfg(unix)]
        {
            self.own.is_some()
        }
        #[cfg(not(unix))]
        {
            false
        }
    }

    /// The descriptor to `dup2` onto fds 1 and 2 (`file` is the capture file it belongs to).
    pub(super) fn target<'a>(&'a self, file: &'a File) -> io::Result<sys::FileFd<'a>> {
        #[cfg(unix)]
        if let Some(own) = &self.own {
            return sys::file_fd(own);
        }
        sys::file_fd(file)
    }

    /// Closes the outlet, once fds 1 and 2 point elsewhere: answers whether a process may still
    /// hold the capture file (a descriptor of the outlet is still open somewhere: a process
    /// that inherited fd 1 or 2), whether that is known exactly, and the outlet for the file's
    /// next capture when nobody does and it has spare opens left. Where it cannot be told (no
    /// outlet of its own, see the module docs) a process may: `(true, false, None)`.
    pub(super) fn close(self, file: &File) -> (bool, bool, Option<Self>) {
        #[cfg(unix)]
        if let Some(own) = self.own {
            drop(own);
            return match still_held(file) {
                Some(true) => (true, true, None),
                Some(false) if self.spares.is_empty() => (false, true, None),
                Some(false) => (false, true, Some(Self::from_spares(self.spares, file))),
                None => (true, false, None),
            };
        }
        let _ = file;
        (true, false, None)
    }
}

/// Whether the closed outlet of `file` is still open somewhere (see [`Outlet::close`]): `None`
/// when that cannot be told.
pub(super) fn still_held(file: &File) -> Option<bool> {
    #[cfg(unix)]
    {
        sys::outlet_held(file).ok()
    }
    #[cfg(not(unix))]
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
