//! Per-call state shared by the threads that can end a call: [`CallFlags`].

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::sync::lock;

type CancelHook = Box<dyn Fn() + Send + Sync>;

/// Per-call state shared by the worker, the reader (cancellation) and the timer (timeouts).
#[derive(Default)]
pub(crate) struct CallFlags {
    cancelled: AtomicBool,
    timed_out: AtomicBool,
    /// Set (under the lock) once the response is being written: nothing may follow it.
    finished: Mutex<bool>,
    hooks: Mutex<Vec<CancelHook>>,
    /// Whether a hook was ever added: most calls have none, and finishing them skips the lock.
    hooked: AtomicBool,
}

impl CallFlags {
    pub(crate) fn cancel(&self) {
        // Taken so that a progress or log write in flight finishes before the flag flips, and
        // none starts after it.
        let guard = lock(&self.finished);
        let first = !self.cancelled.swap(true, Ordering::SeqCst);
        drop(guard);
        if first {
            let hooks = std::mem::take(&mut *lock(&self.hooks));
            for hook in hooks {
                hook();
            }
        }
    }

    /// Cancels without waiting for a write in flight: for when the output is already dead (the
    /// caller may be that very write, holding the call's write lock).
    pub(crate) fn cancel_unordered(&self) {
        if !self.cancelled.swap(true, Ordering::SeqCst) {
            let hooks = std::mem::take(&mut *lock(&self.hooks));
            for hook in hooks {
                hook();
            }
        }
    }

    /// Runs `hook` when the call is cancelled (on the cancelling thread), or at once if it was;
    /// a hook still waiting when the call finishes is dropped without running.
    pub(crate) fn on_cancel(&self, hook: impl Fn() + Send + Sync + 'static) {
        let mut hooks = lock(&self.hooks);
        if self.is_cancelled() {
            drop(hooks);
            hook();
        } else {
            hooks.push(Box::new(hook));
            self.hooked.store(true, Ordering::Release);
        }
    }

    pub(crate) fn time_out(&self) {
        self.timed_out.store(true, Ordering::SeqCst);
        self.cancel();
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    pub(crate) fn timed_out(&self) -> bool {
        self.timed_out.load(Ordering::SeqCst)
    }

    /// Runs `f` unless the call has finished; `finish = true` marks it finished.
    pub(crate) fn while_open<T>(&self, finish: bool, f: impl FnOnce() -> T) -> Option<T> {
        let mut done = lock(&self.finished);
        if *done {
            return None;
        }
        if finish {
            *done = true;
        }
        let out = f();
        drop(done);
        if finish && self.hooked.load(Ordering::Acquire) {
            // A finished call is never cancelled: its hooks go now. They may hold what holds
            // these flags (an asyncio task whose context holds the call's context), a cycle
            // no garbage collector sees through; they are dropped outside the lock, since
            // dropping them may run code that writes for the call.
            drop(std::mem::take(&mut *lock(&self.hooks)));
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::CallFlags;

    #[test]
    fn a_finished_call_lets_go_of_its_cancel_hooks_without_running_them() {
        let flags = CallFlags::default();
        let held = Arc::new(());
        let theirs = Arc::clone(&held);
        flags.on_cancel(move || panic!("ran {theirs:?}"));
        assert_eq!(Arc::strong_count(&held), 2);
        assert_eq!(flags.while_open(true, || "answered"), Some("answered"));
        assert_eq!(Arc::strong_count(&held), 1);
        flags.cancel(); // too late: nothing runs
    }

    #[test]
    fn a_write_that_does_not_finish_the_call_keeps_its_hooks() {
        let flags = CallFlags::default();
        let held = Arc::new(());
        let theirs = Arc::clone(&held);
        flags.on_cancel(move || drop(Arc::clone(&theirs)));
        assert_eq!(flags.while_open(false, || 1), Some(1));
        assert_eq!(Arc::strong_count(&held), 2);
    }
}
