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
//! On Linux that description is, where it can be, a pipe's rather than the file's: the *pipe
//! outlet*, a writing open of a pipe made anew through `/proc/self/fd`, whose bytes the cell
//! moves into the capture file whenever it reads the file ([`Outlet::settle`]; the capture
//! cap's watcher too, while a call runs). A child that opens fd 1 or 2 anew with truncation
//! (C's `system("... > /dev/stderr")`, which nothing reports) then reaches the pipe, and
//! empties nothing. Writing into a pipe nobody waits on costs no wake-up, and less than writing
//! into the file. Whether anybody still holds a pipe outlet needs no lock: once the cell's own
//! writing descriptor is closed, the pipe's input ends exactly when no process has one any
//! more, however it got it (inherited, or opened anew through `/dev/stderr`). One still held
//! when its call is over is followed for late output until then (see `piped`), and the capture
//! file, which no other process ever held, is reused at once. Where no pipe can be had (no
//! watcher thread, `piped`'s follower full, a forked child), the outlet is the file opened
//! anew.
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
use std::sync::Arc;

use super::RealStderr;
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
    /// The pipe `own` writes into, for a pipe outlet (see the module docs).
    #[cfg(target_os = "linux")]
    pipe: Option<Pipe>,
}

/// The reading side of a pipe outlet.
#[cfg(target_os = "linux")]
#[derive(Debug)]
struct Pipe {
    /// Looks into the pipe without reading it (`None`: every look reads). Declared before
    /// `read`, so that its watch ends while the reading end is still open.
    look: Option<sys::PipeLook>,
    /// The reading end (non-blocking).
    read: File,
    /// How much the pipe holds.
    holds: usize,
    /// [`sys::fork_count`] when it was made: a forked child leaves the pipe to its parent.
    forks: u64,
    /// The calls of the capture writing through it, for the label of late output.
    labels: Vec<Arc<str>>,
    /// How many bytes the cell has appended to the capture file from it ([`Outlet::settle`],
    /// [`Outlet::write_own`]): nothing else grows the file, so its size is known without
    /// asking the system (see [`Outlet::len`]).
    appended: std::sync::atomic::AtomicU64,
    /// The file's size, and `appended`, when the capture began.
    at_begin: (u64, u64),
}

impl Outlet {
    /// An outlet for `file`: on Linux with `/proc`, its own locked description (see the module
    /// docs), marked for `capture::still_on`; elsewhere `None` on unix (the file's next outlet
    /// must come from its spare opens), one that cannot tell on Windows.
    pub(super) fn new(file: &File) -> Option<Self> {
        #[cfg(target_os = "linux")]
        {
            if !sys::reopens() {
                return None;
            }
            Some(
                Self::pipe()
                    .unwrap_or_else(|| Self::marked(sys::outlet(file).ok(), Vec::new(), file)),
            )
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
        Self {
            own,
            spares,
            #[cfg(target_os = "linux")]
            pipe: None,
        }
    }

    /// A pipe outlet (see the module docs), if one can be had: a watcher moves its bytes while
    /// a call runs, and the follower has room for it should it outlive its call.
    #[cfg(target_os = "linux")]
    fn pipe() -> Option<Self> {
        if !super::drain::watching() || !super::piped::can_follow() {
            return None;
        }
        let (read, own, holds) = sys::outlet_pipe().ok()?;
        sys::mark(&own).ok()?;
        let look = sys::PipeLook::new(&read).ok();
        Some(Self {
            own: Some(own),
            spares: Vec::new(),
            pipe: Some(Pipe {
                look,
                read,
                holds,
                forks: sys::fork_count(),
                labels: Vec::new(),
                appended: std::sync::atomic::AtomicU64::new(0),
                at_begin: (0, 0),
            }),
        })
    }

    /// Whether fds 1 and 2 write through a pipe (see the module docs): a truncating open of
    /// them empties nothing, and nothing needs to move them to one.
    pub(super) const fn is_pipe(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.pipe.is_some()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }

    /// A capture begins writing through the outlet into a file of `len` bytes, for the call
    /// `label` (a pipe outlet labels late output with it).
    pub(super) fn begin(&mut self, label: &Arc<str>, len: u64) {
        #[cfg(target_os = "linux")]
        if let Some(pipe) = &mut self.pipe {
            pipe.labels.clear();
            pipe.labels.push(Arc::clone(label));
            pipe.at_begin = (len, pipe.appended());
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (label, len);
    }

    /// The capture file's size, where a pipe outlet knows it without asking the system: the
    /// size when the capture began and what the cell appended since (nothing else writes to
    /// the file while fds 1 and 2 write through a pipe). Meaningful until the file is emptied.
    pub(super) fn len(&self) -> Option<u64> {
        #[cfg(target_os = "linux")]
        if let Some(pipe) = &self.pipe {
            let (len, appended) = pipe.at_begin;
            return Some(len + (pipe.appended() - appended));
        }
        None
    }

    /// Another call joined the capture writing through the outlet.
    pub(super) fn joined(&mut self, label: &Arc<str>) {
        #[cfg(target_os = "linux")]
        if let Some(pipe) = &mut self.pipe {
            pipe.labels.push(Arc::clone(label));
        }
        #[cfg(not(target_os = "linux"))]
        let _ = label;
    }

    /// What reaches the outlet now belongs to no call (fds 1 and 2 stayed on it between calls).
    pub(super) fn between_calls(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(pipe) = &mut self.pipe {
            pipe.labels = vec![Arc::from("background")];
        }
    }

    /// Moves what a pipe outlet holds into `file`, the capture file: a reader of the file then
    /// sees every byte written before. Answers how much moved. Nothing for a file outlet, in a
    /// forked child (the pipe is its parent's to empty), and while the process dies of a fatal
    /// signal (its handler copies what the pipe holds).
    pub(super) fn settle(&self, file: &File) -> u64 {
        #[cfg(target_os = "linux")]
        if let Some(pipe) = &self.pipe {
            return pipe.settle(file);
        }
        let _ = file;
        0
    }

    /// Writes `bytes` meant for `fd` (1 or 2) for one call among those sharing the capture,
    /// straight into `file` after what a pipe outlet holds: answers the file's size before and
    /// after, and the count. `None` for a file outlet, when `fd` does not write through this
    /// one (the tool moved it), and in a forked child (its writes go through the pipe).
    pub(super) fn write_own(
        &self,
        file: &File,
        fd: i32,
        bytes: &[u8],
    ) -> Option<io::Result<(u64, u64, usize)>> {
        #[cfg(target_os = "linux")]
        if let Some(pipe) = &self.pipe {
            if pipe.forks != sys::fork_count() || !sys::is_marked(fd) {
                return None;
            }
            pipe.settle(file);
            let measured = super::append_measured(file, bytes);
            if let Ok((_, _, written)) = measured {
                pipe.count(written);
            }
            return Some(measured);
        }
        let _ = (file, fd, bytes);
        None
    }

    /// The reading end of a pipe outlet, for the fatal-signal handler (`None`: a file outlet).
    #[cfg(unix)]
    pub(super) fn pipe_fd(&self) -> Option<i32> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd as _;
            self.pipe.as_ref().map(|pipe| pipe.read.as_raw_fd())
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
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
    ///
    /// A pipe outlet moves what it holds into `file` first. Held by somebody, it goes on to be
    /// followed for late output, written to `late` (see `piped`), and the file is free: nobody
    /// but the cell ever held it. Held by nobody, the same pipe is the next capture's outlet.
    pub(super) fn close(self, file: &File, late: Option<RealStderr>) -> (bool, bool, Option<Self>) {
        #[cfg(target_os = "linux")]
        if self.pipe.is_some() {
            return self.close_pipe(file, late, true);
        }
        let _ = late;
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

    /// Lets go of the outlet for good (its file is not used again, or gets another outlet):
    /// as [`Outlet::close`], without making the next one. A pipe outlet somebody still holds
    /// is followed for late output, written to `late`.
    pub(super) fn let_go(self, file: &File, late: Option<RealStderr>) {
        #[cfg(target_os = "linux")]
        if self.pipe.is_some() {
            self.close_pipe(file, late, false);
            return;
        }
        let _ = (file, late);
    }

    /// Whether the outlet was made in this process: a forked child's copy of its parent's
    /// pipe outlet is the parent's to empty, and useless to the child's own captures.
    pub(super) fn is_ours(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(pipe) = &self.pipe {
            return pipe.forks == sys::fork_count();
        }
        true
    }
}

#[cfg(target_os = "linux")]
impl Outlet {
    /// [`Outlet::close`] of a pipe outlet.
    fn close_pipe(
        self,
        file: &File,
        late: Option<RealStderr>,
        again: bool,
    ) -> (bool, bool, Option<Self>) {
        let Self { own, pipe, .. } = self;
        let Some(mut pipe) = pipe else {
            return (true, false, None);
        };
        drop(own);
        if pipe.forks != sys::fork_count() {
            return (false, true, None); // the parent's pipe, whose copies here just closed
        }
        // The end of the pipe's input says exactly that no process holds a writing
        // descriptor of it any more, however it got one: inherited, or opened anew through
        // `/dev/stderr` (which carries no lock).
        if pipe.settle_to_end(file) {
            let next = again
                .then(|| sys::pipe_outlet(&pipe.read).ok())
                .flatten()
                .filter(|own| sys::mark(own).is_ok());
            let next = next.map(|own| Self {
                own: Some(own),
                spares: Vec::new(),
                pipe: Some(pipe),
            });
            return (false, true, next);
        }
        // Somebody else writes there still. Followed, it needs no more room than a pipe
        // usually has (what 1 MiB pipes a user may have is limited). Without a real stderr
        // to pass it on to, the pipe closes: its writers get EPIPE.
        if let Some(err) = late {
            drop(pipe.look.take()); // its watch ends while this process holds the reading end
            sys::shrink_pipe(&pipe.read);
            let names: Vec<&str> = pipe.labels.iter().map(|label| &**label).collect();
            let label = format!("[{}, late] ", names.join(" + "));
            super::piped::follow(pipe.read, label, err);
        }
        (false, true, None)
    }
}

#[cfg(target_os = "linux")]
impl Pipe {
    /// See [`Outlet::settle`].
    fn settle(&self, file: &File) -> u64 {
        self.settle_up(file, false).0
    }

    /// Settles, and answers whether the pipe's input has ended (no writer is left).
    fn settle_to_end(&self, file: &File) -> bool {
        self.settle_up(file, true).1
    }

    fn settle_up(&self, file: &File, to_end: bool) -> (u64, bool) {
        use std::io::Read as _;

        /// How much is read at a time.
        const CHUNK: u64 = 64 * 1024;
        /// What a first look reads onto the stack: a call's few lines, in one `read`.
        const FIRST: usize = 4 * 1024;

        if self.forks != sys::fork_count() || sys::dying() {
            return (0, false);
        }
        // Empty, with a writer left: nothing to move, and its input goes on.
        if self.look.as_ref().is_some_and(|look| !look.has_news()) {
            return (0, false);
        }
        // A pipe's `read` hands over everything it holds, up to the count asked for: a first
        // read short of `FIRST` has emptied it.
        let mut first = [0; FIRST];
        let mut moved = match (&self.read).read(&mut first) {
            Ok(0) => return (0, true), // the end of input, every writer gone
            Ok(read) => {
                self.append(file, &first[..read]);
                if read < FIRST && !to_end {
                    return (read as u64, false);
                }
                read as u64
            }
            // Dry (`WouldBlock`), or unreadable: nothing to move.
            Err(_) => return (0, false),
        };
        // At most what the pipe held when this began, not what a busy child keeps adding.
        // `read_to_end` looks with a small probe first; what it read stays in `bytes` when
        // the pipe runs dry (`WouldBlock`).
        let most = (self.holds as u64).saturating_add(CHUNK);
        let mut bytes = Vec::new();
        let mut ended = false;
        while moved < most {
            bytes.clear();
            let read = (&self.read).take(CHUNK).read_to_end(&mut bytes);
            // `Ok` short of the chunk: the end of input, every writer gone.
            ended = read.is_ok() && (bytes.len() as u64) < CHUNK;
            self.append(file, &bytes);
            moved += bytes.len() as u64;
            if (bytes.len() as u64) < CHUNK {
                break; // the pipe ran dry, or ended
            }
        }
        (moved, ended)
    }

    /// Appends bytes the pipe held to the capture file (opened to append); a failed write
    /// loses these bytes only.
    fn append(&self, file: &File, bytes: &[u8]) {
        use std::io::Write as _;
        if !bytes.is_empty() && (&*file).write_all(bytes).is_ok() {
            self.count(bytes.len());
        }
    }

    fn appended(&self) -> u64 {
        self.appended.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn count(&self, bytes: usize) {
        self.appended
            .fetch_add(bytes as u64, std::sync::atomic::Ordering::Relaxed);
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
