//! Noticing that the process that started us has gone away.

/// The parent process id as seen now.
#[cfg(unix)]
pub(crate) fn parent_id() -> u32 {
    std::os::unix::process::parent_id()
}

/// Whether the parent we started with is still our parent (on unix an orphan is re-parented,
/// so a changed parent id means the original one died).
#[cfg(unix)]
pub(crate) fn parent_alive(original: u32) -> bool {
    std::os::unix::process::parent_id() == original
}

#[cfg(windows)]
pub(crate) fn parent_id() -> u32 {
    crate::capture::windows_parent_id()
}

#[cfg(windows)]
pub(crate) fn parent_alive(original: u32) -> bool {
    crate::capture::windows_process_alive(original)
}
