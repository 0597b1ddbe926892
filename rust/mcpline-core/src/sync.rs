//! The one way mcpline takes a lock: [`lock`].

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, taking the guard even when a panicking holder poisoned it.
///
/// mcpline's shared state stays consistent across a panic (every critical section either
/// completes its update or leaves the old value, and restoration of descriptors rides `Drop`),
/// so a poisoned mutex carries no broken invariant: refusing it would only turn one failed tool
/// call into a dead server.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
