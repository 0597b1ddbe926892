//! The single way out: every frame the server sends goes through [`Outbox`], and every request's
//! response is released here, exactly once (or never, when cancelled).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::error::TransportError;
use crate::flags::CallFlags;
use crate::jsonrpc::{Answer, RequestId, encode};
use crate::log::log_line;
use crate::protocol::LogLevel;
use crate::sync::lock;
use crate::trace::{Direction, Trace};
use crate::transport::Transport;

/// What to do when the client stops reading: called once, from inside the failed write.
pub(crate) type OnOutputClosed = Box<dyn Fn() + Send + Sync>;

/// Where a tool call's response goes.
#[derive(Clone)]
pub(crate) enum Route {
    Direct,
    Batch(Arc<Batch>),
}

/// A request whose response is still owed.
struct Pending {
    flags: Arc<CallFlags>,
    route: Route,
}

/// The outgoing half of a session, shared by the reader, the worker and every [`CallContext`]
/// (progress and log notifications).
///
/// [`CallContext`]: crate::CallContext
pub(crate) struct Outbox {
    transport: Arc<dyn Transport>,
    closed: AtomicBool,
    on_closed: OnOutputClosed,
    /// Legacy `logging/setLevel` threshold (`NO_LEVEL` = not set), shared by every exchange of
    /// one client's session.
    log_level: Arc<AtomicU8>,
    pending: Mutex<HashMap<RequestId, Pending, foldhash::fast::RandomState>>,
    /// Responses taken out of `pending` and not yet written.
    releasing: AtomicUsize,
    /// `MCPLINE_TRACE`: every frame in and out.
    trace: Option<Trace>,
}

const NO_LEVEL: u8 = u8::MAX;

/// A `logging/setLevel` threshold that is not set yet.
pub(crate) fn unset_log_level() -> Arc<AtomicU8> {
    Arc::new(AtomicU8::new(NO_LEVEL))
}

impl Outbox {
    pub(crate) fn new(
        transport: Arc<dyn Transport>,
        on_closed: OnOutputClosed,
        log_level: Arc<AtomicU8>,
    ) -> Self {
        Self {
            transport,
            closed: AtomicBool::new(false),
            on_closed,
            log_level,
            pending: Mutex::new(HashMap::default()),
            releasing: AtomicUsize::new(0),
            trace: Trace::from_env(),
        }
    }

    /// Whether every response owed has been written (or dropped by a cancel): nothing pending
    /// and nothing being released.
    pub(crate) fn owes_nothing(&self) -> bool {
        let pending = lock(&self.pending);
        pending.is_empty() && self.releasing.load(Ordering::SeqCst) == 0
    }

    /// Whether a response is being released now (out of `pending`, not yet written or
    /// dropped): the transport's `released` follows.
    pub(crate) fn releasing(&self) -> bool {
        self.releasing.load(Ordering::SeqCst) > 0
    }

    /// Records a frame the client sent, when tracing.
    pub(crate) fn trace_in(&self, bytes: &[u8]) {
        if let Some(trace) = &self.trace {
            trace.record(Direction::In, bytes);
        }
    }

    /// Writes one frame; a dead output is reported once (see [`OnOutputClosed`]) and every later
    /// frame is dropped.
    pub(crate) fn write(&self, frame: &Value) {
        self.send(frame, false);
    }

    /// Writes a response being released (see [`Transport::write_response`]).
    fn write_response(&self, frame: &Value) {
        self.send(frame, true);
    }

    fn send(&self, frame: &Value, response: bool) {
        self.send_line(&encode(frame), response);
    }

    fn send_line(&self, line: &[u8], response: bool) {
        if self.closed.load(Ordering::Relaxed) {
            return;
        }
        if let Some(trace) = &self.trace {
            trace.record(Direction::Out, line);
        }
        let written = if response {
            self.transport.write_response(line)
        } else {
            self.transport.write_line(line)
        };
        match written {
            Ok(()) => {}
            Err(TransportError::OutputClosed(_) | TransportError::PeerGone) => {
                if !self.closed.swap(true, Ordering::SeqCst) {
                    log_line("the client closed the protocol output; stopping");
                    (self.on_closed)();
                }
            }
            Err(e) => log_line(&e.to_string()),
        }
    }

    /// Whether the client stopped reading.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// The `logging/setLevel` threshold of a handshake-era session, if the client set one.
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        LogLevel::from_u8(self.log_level.load(Ordering::Relaxed))
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        self.log_level.store(level.to_u8(), Ordering::Relaxed);
    }

    /// Notes that `id`'s response is owed along `route`; false when `id` is already in use by a
    /// call in progress.
    pub(crate) fn expect(&self, id: &RequestId, flags: &Arc<CallFlags>, route: &Route) -> bool {
        match lock(&self.pending).entry(id.clone()) {
            Entry::Occupied(_) => false,
            Entry::Vacant(slot) => {
                slot.insert(Pending {
                    flags: Arc::clone(flags),
                    route: route.clone(),
                });
                true
            }
        }
    }

    /// The one place a tool call's response is released: at most once, never after a cancel,
    /// and only for the call that `flags` belongs to (an id may be reused once a call was
    /// cancelled, while the cancelled call is still winding down).
    pub(crate) fn complete(&self, id: &RequestId, flags: &Arc<CallFlags>, answer: Answer) {
        let entry = {
            let mut pending = lock(&self.pending);
            match pending.get(id) {
                Some(p) if Arc::ptr_eq(&p.flags, flags) => {
                    self.releasing.fetch_add(1, Ordering::SeqCst);
                    pending.remove(id)
                }
                _ => None,
            }
        };
        let Some(entry) = entry else { return };
        /// Ends the release once the frame is out (or dropped), also if writing unwinds.
        struct Released<'a>(&'a Outbox);
        impl Drop for Released<'_> {
            fn drop(&mut self) {
                self.0.releasing.fetch_sub(1, Ordering::SeqCst);
                self.0.transport.released();
            }
        }
        let _released = Released(self);
        let send = || match &entry.route {
            Route::Direct => self.send_line(&answer.encode(id), true),
            Route::Batch(batch) => batch.deliver(self, Some(answer.into_frame(id))),
        };
        if entry.flags.while_open(true, send).is_none() {
            if let Route::Batch(batch) = &entry.route {
                batch.deliver(self, None);
            }
        }
    }

    /// Every call still owed is told to stop and its response is never sent (the client of an
    /// HTTP exchange went away).
    pub(crate) fn cancel_all(&self) {
        let owed: Vec<Pending> = lock(&self.pending).drain().map(|(_, p)| p).collect();
        for entry in &owed {
            entry.flags.cancel();
        }
        if !owed.is_empty() {
            self.transport.released();
        }
    }

    /// `notifications/cancelled`: the call is told to stop and its response is never sent.
    pub(crate) fn cancel(&self, id: &RequestId) {
        let entry = lock(&self.pending).remove(id);
        if let Some(entry) = entry {
            entry.flags.cancel();
            if let Route::Batch(batch) = &entry.route {
                batch.deliver(self, None);
            }
            self.transport.released();
        }
    }
}

/// Collects the responses of one 2025-03-26 batch and writes them as one array.
pub(crate) struct Batch {
    /// The responses so far, and how many members are still outstanding.
    state: Mutex<(Vec<Value>, usize)>,
}

impl Batch {
    pub(crate) fn new() -> Self {
        // One outstanding "seal" until every member has been read.
        Self {
            state: Mutex::new((Vec::new(), 1)),
        }
    }

    /// One more member will deliver an outcome.
    pub(crate) fn expect(&self) {
        lock(&self.state).1 += 1;
    }

    /// Delivers one member's outcome (`None`: nothing to send for it, or the seal).
    pub(crate) fn deliver(&self, outbox: &Outbox, frame: Option<Value>) {
        let mut st = lock(&self.state);
        if let Some(f) = frame {
            st.0.push(f);
        }
        st.1 -= 1;
        if st.1 == 0 {
            let frames = std::mem::take(&mut st.0);
            drop(st);
            if !frames.is_empty() {
                outbox.write_response(&Value::Array(frames));
            }
        }
    }
}
