//! Noticing that the process that started us has gone away, so orphans cannot pile up; and
//! what runs before the server ends the process itself.

use std::sync::mpsc;
use std::thread;

use crate::config::{EXIT_HOOK_PATIENCE, ExitHook};
use crate::log::log_line;

/// Runs `hook` on a thread of its own and waits for it at most [`EXIT_HOOK_PATIENCE`]: the hook
/// may need what a stuck tool holds (Python's GIL), and the process must exit regardless.
pub(crate) fn run_exit_hook(hook: Option<&ExitHook>) {
    let Some(hook) = hook.cloned() else { return };
    let (done, finished) = mpsc::channel();
    let spawned = thread::Builder::new()
        .name("mcpline-exit-hook".into())
        .spawn(move || {
            hook();
            let _ = done.send(());
        });
    match spawned {
        Ok(_) => {
            if finished.recv_timeout(EXIT_HOOK_PATIENCE).is_err() {
                log_line(
                    "the shutdown hook (the lifespan's exit) did not finish; exiting without it",
                );
            }
        }
        Err(e) => log_line(&format!("cannot run the shutdown hook: {e}")),
    }
}

/// Watches the parent process the server started with.
pub(crate) struct ParentWatch {
    #[cfg(unix)]
    original: u32,
    #[cfg(windows)]
    handle: Option<crate::sys::ParentHandle>,
}

impl ParentWatch {
    /// Remembers the current parent.
    pub(crate) fn new() -> Self {
        #[cfg(unix)]
        {
            Self {
                original: std::os::unix::process::parent_id(),
            }
        }
        #[cfg(windows)]
        {
            Self {
                handle: crate::sys::ParentHandle::open(),
            }
        }
    }

    /// Whether that parent still runs. On unix an orphan is re-parented, so a changed parent id
    /// means the original parent died; on Windows a handle to the parent is waited on, opened only
    /// if that process is older than this one (a reused id is not the parent), and only a
    /// signalled handle counts as its exit.
    pub(crate) fn parent_alive(&self) -> bool {
        #[cfg(unix)]
        {
            std::os::unix::process::parent_id() == self.original
        }
        #[cfg(windows)]
        {
            self.handle
                .as_ref()
                .is_none_or(crate::sys::ParentHandle::alive)
        }
    }
}
