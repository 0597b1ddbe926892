//! Noticing that the process that started us has gone away, so orphans cannot pile up.

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
