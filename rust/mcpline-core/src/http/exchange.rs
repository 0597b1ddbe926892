//! One HTTP request's messages from dispatch to their last frame: [`Exchange`].
//!
//! Every POST is served by a session of its own (sharing the client's [`PeerState`] when it
//! belongs to a handshake-era session), whose output is a [`Sink`] the HTTP side drains. The
//! calls it queued run on whichever thread calls [`Exchange::run`] (the HTTP side's bounded
//! pool); an async tool's call only starts there and ends on the tools' event loop.
//!
//! [`PeerState`]: crate::session::PeerState

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use crate::error::TransportError;
use crate::framing::Inbound;
use crate::queue::Popped;
use crate::session::Session;
use crate::sync::lock;
use crate::transport::Transport;

/// Called (from any thread, with no lock of the sink held) when a frame is ready or the
/// exchange is over.
pub type Wake = Box<dyn Fn() + Send + Sync>;

/// What an exchange has for the HTTP side.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// One message (a notification, or a response with more to come), without a newline.
    Frame(Vec<u8>),
    /// The exchange's last message: nothing more is owed after it.
    Last(Vec<u8>),
    /// Nothing yet: wait for the wake (or [`Exchange::wait`]).
    Pending,
    /// Every frame has been taken and nothing more is owed.
    Done,
}

#[derive(Default)]
struct SinkState {
    frames: VecDeque<Vec<u8>>,
    /// The HTTP client went away: further frames are refused (the session then cancels its
    /// calls, as a stdio server does when its output closes).
    closed: bool,
}

/// The output of one exchange: frames in the order the session wrote them.
#[derive(Default)]
pub(crate) struct Sink {
    state: Mutex<SinkState>,
    ready: Condvar,
    wake: Mutex<Option<Arc<Wake>>>,
}

impl Sink {
    /// Every frame written so far.
    pub(crate) fn take_all(&self) -> Vec<Vec<u8>> {
        lock(&self.state).frames.drain(..).collect()
    }

    fn push(&self, line: &[u8]) {
        let mut st = lock(&self.state);
        // Once abandoned, frames are dropped: the calls were told to stop already.
        if !st.closed {
            st.frames.push_back(line.to_vec());
        }
    }

    fn wake(&self) {
        let wake = lock(&self.wake).clone();
        self.ready.notify_all();
        if let Some(wake) = wake {
            wake();
        }
    }
}

impl Transport for Sink {
    fn read_line(&self) -> Result<Option<Inbound>, TransportError> {
        Ok(None)
    }

    fn released(&self) {
        self.wake();
    }

    fn write_line(&self, line: &[u8]) -> Result<(), TransportError> {
        self.push(line);
        self.wake();
        Ok(())
    }

    fn write_response(&self, line: &[u8]) -> Result<(), TransportError> {
        // The wake comes with `released`: the reader then sees the response as the last frame.
        self.push(line);
        Ok(())
    }
}

/// One HTTP request being answered.
pub struct Exchange {
    session: Arc<Session>,
    sink: Arc<Sink>,
    /// The handshake-era session the request belongs to, which keeps a handle on it so a
    /// `notifications/cancelled` sent in another request reaches its calls.
    _member: Option<super::sessions::Membership>,
}

impl Exchange {
    pub(crate) fn new(
        session: Arc<Session>,
        sink: Arc<Sink>,
        member: Option<super::sessions::Membership>,
    ) -> Self {
        Self {
            session,
            sink,
            _member: member,
        }
    }

    /// Runs the calls the request queued, on the calling thread: a sync tool's whole run, an
    /// async tool's start (it ends on its event loop). Returns when none is left to start.
    pub fn run(&self) {
        while let Popped::Job(job) = self.session.queue.pop(Some(Duration::ZERO), None) {
            if !job.flags.is_cancelled() {
                self.session.run_job(job);
            }
        }
        // Nothing may be written to fds 1 and 2 parked on a capture while no call runs.
        if !self.session.queue.has_jobs() {
            let _ = crate::capture::settle();
        }
        self.sink.wake();
    }

    /// Whether calls wait for [`Exchange::run`].
    #[must_use]
    pub fn has_work(&self) -> bool {
        self.session.queue.has_jobs()
    }

    /// The next frame, if one is ready.
    #[must_use]
    pub fn next(&self) -> Next {
        // Owed-nothing is read before the frames: a response released after this check is
        // either already among the frames or still owed.
        let over = self.over();
        let mut st = lock(&self.sink.state);
        if !over && st.frames.len() == 1 {
            // The one frame may be the last response, written just now: looked at again.
            if self.over() {
                return st.frames.pop_front().map_or(Next::Done, Next::Last);
            }
            if self.session.outbox.releasing() {
                // A response is on its way out; its release wakes the reader again.
                return Next::Pending;
            }
        }
        match st.frames.pop_front() {
            Some(frame) if over && st.frames.is_empty() => Next::Last(frame),
            Some(frame) => Next::Frame(frame),
            None if over => Next::Done,
            None => Next::Pending,
        }
    }

    /// Nothing is owed and nothing waits to run: no frame will come after those written.
    fn over(&self) -> bool {
        self.session.outbox.owes_nothing() && !self.session.queue.has_jobs()
    }

    /// Waits at most `timeout` for something other than [`Next::Pending`].
    #[must_use]
    pub fn wait(&self, timeout: Duration) -> Next {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let next = self.next();
            if next != Next::Pending {
                return next;
            }
            let st = lock(&self.sink.state);
            let now = std::time::Instant::now();
            if now >= deadline {
                return Next::Pending;
            }
            if st.frames.is_empty() {
                // In slices: a wake between `next()` and this wait is not seen until the next.
                let slice = (deadline - now).min(Duration::from_millis(50));
                drop(
                    self.sink
                        .ready
                        .wait_timeout(st, slice)
                        .unwrap_or_else(PoisonError::into_inner),
                );
            }
        }
    }

    /// Calls `wake` whenever a frame is ready or the exchange may be over.
    pub fn set_wake(&self, wake: Wake) {
        *lock(&self.sink.wake) = Some(Arc::new(wake));
        // A frame written before the wake was set must not go unnoticed.
        self.sink.wake();
    }

    /// The HTTP client went away before the last frame: every call still owed is cancelled
    /// and nothing more is kept.
    pub fn abandon(&self) {
        {
            let mut st = lock(&self.sink.state);
            st.closed = true;
            st.frames.clear();
        }
        self.session.abandon_exchange();
        *lock(&self.sink.wake) = None;
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        // A response nobody will take: its calls stop (a no-op once everything was answered).
        if !self.session.outbox.owes_nothing() || self.session.queue.has_jobs() {
            self.abandon();
        }
    }
}
