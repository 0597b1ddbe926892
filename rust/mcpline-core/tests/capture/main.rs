//! The capture cell: capturing fds 1 and 2 around a tool, protecting the protocol streams,
//! and reading what a capture holds.
//!
//! The cell redirects fds 0, 1 and 2 for the whole process, and some cases close them, so every
//! test runs its case in a child process of its own ([`support::run_child`]): the tests in this
//! process only start children, one at a time, and check what they wrote.

#[path = "../support/mod.rs"]
mod support;

// What a capture takes in, and how it ends.
#[cfg(unix)]
mod c_stdio;
mod child_process;
mod nesting;
mod panic_restore;
#[cfg(target_os = "linux")]
mod pipe_outlet;
mod rust_writes;
mod shared;
#[cfg(unix)]
mod spare_file;
#[cfg(target_os = "linux")]
mod spare_opens;

// Protecting the protocol streams, and captures inside the protection.
mod parking;
mod protected_cycles;
mod protected_restore;
mod protected_stdio;
mod real_stderr;
#[cfg(windows)]
mod std_handles;

// Reading a finished capture.
mod copy_labelled;
mod tail_text;
#[cfg(unix)]
mod truncation;

// Descriptors and cost.
#[cfg(target_os = "linux")]
mod cloexec;
#[cfg(target_os = "linux")]
mod closed_fds;
mod cycle_cost;
#[cfg(any(target_os = "linux", windows))]
mod fd_leak;
