//! The bounded queue of tool calls between the reader (push), the worker (pop) and whoever
//! shuts the server down (close, take): [`JobQueue`].

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::config::ServeEnd;
use crate::flags::CallFlags;
use crate::sync::lock;

/// A queued unit of work: the queue only needs its flags (to know what runs, and to cancel it).
pub(crate) trait Queued {
    fn flags(&self) -> &Arc<CallFlags>;
}

pub(crate) struct JobQueue<J> {
    state: Mutex<QueueState<J>>,
    /// Jobs, idleness, room in the queue, closing.
    changed: Condvar,
    capacity: usize,
}

struct QueueState<J> {
    jobs: VecDeque<J>,
    closed: bool,
    /// Why the serve ends; the first reason recorded wins.
    end: Option<ServeEnd>,
    running: Option<Arc<CallFlags>>,
    /// Calls of concurrent tools that were started and have not ended.
    in_flight: Vec<Arc<CallFlags>>,
    idle: bool,
    /// Threads blocked on `changed` other than a full-queue pusher: wake-ups are only paid
    /// for when somebody waits.
    waiters: usize,
    /// Pushers blocked on a full queue. They wait until it has drained to the low-water mark,
    /// so a reader that outruns the tools is woken once per half a queue, not once per call.
    pushers: usize,
    /// Who should read the input (see [`JobQueue::pop`]): the worker, while it has nothing to
    /// run. (Whoever reads holds the input while handling the frame, so frames are handled in
    /// the order they arrived whichever thread read them.)
    worker_reads: bool,
    /// The worker runs a call while it still holds the turn (lent; see [`Turn::lend`]).
    lent: bool,
    /// The reader thread is waiting for input.
    reader_waiting: bool,
}

/// How the reading turn moves between the worker and the reader thread (see [`JobQueue::pop`]).
pub(crate) trait Turn {
    /// Interrupts the reader thread's wait (for input, or for the turn to come back).
    fn wake_reader(&self);

    /// The worker starts a call while holding the turn: arms the alarm that returns the turn to
    /// the reader thread if the call runs long, and answers true; false when the turn must go
    /// back at once (no alarm here, or the client is pipelining and the reader should read on).
    fn lend(&self) -> bool;

    /// The call ended before the alarm: disarms it.
    fn take_back(&self);
}

/// What the reader thread should do about the turn.
pub(crate) enum ReaderTurn {
    Read,
    /// The worker reads (or runs a call on a lent turn): wait for the waker or the alarm.
    Parked,
    Closed,
}

/// What [`JobQueue::pop`] found.
pub(crate) enum Popped<J> {
    /// Run this.
    Job(J),
    /// Nothing to run, and the worker holds the reading turn: read the next frame.
    Read,
    /// No more jobs will come.
    Closed,
    /// The poll interval passed with nothing to do.
    Idle,
}

impl<J: Queued> JobQueue<J> {
    /// A queue that holds at most `capacity` jobs (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            state: Mutex::new(QueueState {
                jobs: VecDeque::new(),
                closed: false,
                end: None,
                running: None,
                in_flight: Vec::new(),
                idle: true,
                waiters: 0,
                pushers: 0,
                worker_reads: false,
                lent: false,
                reader_waiting: false,
            }),
            changed: Condvar::new(),
            capacity: capacity.max(1),
        }
    }

    /// Waits on `changed` (at most `timeout`); returns the guard and whether it timed out.
    fn wait<'a>(
        &self,
        mut st: MutexGuard<'a, QueueState<J>>,
        timeout: Option<Duration>,
    ) -> (MutexGuard<'a, QueueState<J>>, bool) {
        st.waiters += 1;
        let (mut st, timed_out) = match timeout {
            None => (
                self.changed
                    .wait(st)
                    .unwrap_or_else(PoisonError::into_inner),
                false,
            ),
            Some(d) => {
                let (guard, result) = self
                    .changed
                    .wait_timeout(st, d)
                    .unwrap_or_else(PoisonError::into_inner);
                (guard, result.timed_out())
            }
        };
        st.waiters -= 1;
        (st, timed_out)
    }

    /// Wakes the waiters, if any, after a change made under `st`.
    fn notify(&self, st: MutexGuard<'_, QueueState<J>>) {
        let anyone = st.waiters > 0;
        drop(st);
        if anyone {
            self.changed.notify_all();
        }
    }

    /// The queue length at or below which a blocked pusher is woken.
    const fn low_water(&self) -> usize {
        self.capacity / 2
    }

    /// Appends `job`, first waiting for room while the queue is full (unless it closes).
    ///
    /// The worker never waits here: while it holds the reading turn it is the one pushing (and
    /// the only one who could make room), so a batch it reads may take the queue past its
    /// capacity, by at most that one frame's calls. Nor does the reader thread while the worker
    /// holds the turn: it is then finishing the frames it had buffered when the worker took the
    /// turn (at most one read's worth), which the worker waits for.
    ///
    /// A closed queue runs nothing more: the job is handed back (`Err`) for its caller to answer.
    pub(crate) fn push(&self, job: J) -> Result<(), J> {
        let mut st = lock(&self.state);
        if st.jobs.len() >= self.capacity && !st.worker_reads {
            st.pushers += 1;
            while st.jobs.len() > self.low_water() && !st.closed {
                st = self
                    .changed
                    .wait(st)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            st.pushers -= 1;
        }
        if st.closed {
            return Err(job);
        }
        st.jobs.push_back(job);
        self.notify(st);
        Ok(())
    }

    /// The next job, waiting at most `poll` (forever when `None`).
    ///
    /// With a `turn` (the input can be read by either thread), an idle worker reads requests
    /// itself: when it has nothing to run and the reader thread is only waiting for input, the
    /// worker takes the reading turn (interrupting the reader's wait) and gets
    /// [`Popped::Read`]. A lone request then goes from the input to its response on one thread.
    /// The worker keeps the turn while it runs the call, lent ([`Turn::lend`]): the reader
    /// thread takes it back when the call runs long ([`JobQueue::reclaim_lent_turn`]), so pings
    /// and cancellations are read while a call runs, and a quick call wakes nobody.
    pub(crate) fn pop(&self, poll: Option<Duration>, turn: Option<&dyn Turn>) -> Popped<J> {
        let mut st = lock(&self.state);
        loop {
            if let Some(job) = st.jobs.pop_front() {
                st.running = Some(Arc::clone(job.flags()));
                st.idle = false;
                if st.worker_reads {
                    if turn.is_some_and(Turn::lend) {
                        st.lent = true;
                    } else {
                        st.worker_reads = false;
                        if let Some(turn) = turn {
                            turn.wake_reader();
                        }
                    }
                }
                let wake_pusher = st.pushers > 0 && st.jobs.len() <= self.low_water();
                if wake_pusher {
                    drop(st);
                    self.changed.notify_all();
                } else {
                    self.notify(st);
                }
                return Popped::Job(job);
            }
            let was_busy = !st.idle;
            st.running = None;
            st.idle = true;
            if st.lent {
                // The call ended before the alarm: the worker reads on.
                st.lent = false;
                if let Some(turn) = turn {
                    turn.take_back();
                }
            }
            if was_busy && (st.waiters > 0 || st.pushers > 0) {
                self.changed.notify_all();
            }
            if st.closed {
                return Popped::Closed;
            }
            if let Some(turn) = turn {
                if !st.worker_reads && st.reader_waiting {
                    st.worker_reads = true;
                    turn.wake_reader();
                }
                if st.worker_reads {
                    return Popped::Read;
                }
            }
            if poll == Some(Duration::ZERO) {
                // Only a look (an HTTP exchange running what it queued): a zero-timeout wait
                // would still sleep for the timer slack.
                return Popped::Idle;
            }
            let (guard, timed_out) = self.wait(st, poll);
            st = guard;
            if timed_out && st.jobs.is_empty() && !st.closed {
                return Popped::Idle;
            }
        }
    }

    /// Whether the reader thread may read now.
    pub(crate) fn reader_turn(&self) -> ReaderTurn {
        let st = lock(&self.state);
        if st.closed {
            ReaderTurn::Closed
        } else if st.worker_reads {
            ReaderTurn::Parked
        } else {
            ReaderTurn::Read
        }
    }

    /// The alarm of a lent turn went off: if the worker is still running that call, the reader
    /// thread takes the turn back.
    pub(crate) fn reclaim_lent_turn(&self) {
        let mut st = lock(&self.state);
        if st.lent {
            st.lent = false;
            st.worker_reads = false;
        }
    }

    /// Whether the worker holds the reading turn (the reader thread then stands aside).
    pub(crate) fn worker_reads(&self) -> bool {
        lock(&self.state).worker_reads
    }

    /// The reader thread is about to wait for input (`true`), or has some (`false`). An idle
    /// worker is told, so it can take the reading turn.
    pub(crate) fn reader_waiting(&self, waiting: bool) {
        let mut st = lock(&self.state);
        st.reader_waiting = waiting;
        if waiting && st.idle && st.jobs.is_empty() {
            self.notify(st);
        }
    }

    /// Records why the serve ends (the first reason recorded wins).
    pub(crate) fn set_end(&self, end: ServeEnd) {
        lock(&self.state).end.get_or_insert(end);
    }

    /// Why the serve ends, once known.
    pub(crate) fn end(&self) -> Option<ServeEnd> {
        lock(&self.state).end
    }

    /// No more jobs will come: a worker waiting for one gets [`Popped::Closed`].
    pub(crate) fn close(&self) {
        lock(&self.state).closed = true;
        self.changed.notify_all();
    }

    /// Whether a call is waiting in the queue.
    pub(crate) fn has_jobs(&self) -> bool {
        !lock(&self.state).jobs.is_empty()
    }

    /// Waits until a concurrent call may start (fewer than `max` running), then counts it as
    /// running and answers true; false if it was cancelled meanwhile.
    pub(crate) fn begin_concurrent(&self, flags: &Arc<CallFlags>, max: usize) -> bool {
        /// How often a waiting call checks whether it was cancelled.
        const CHECK: Duration = Duration::from_millis(20);
        let mut st = lock(&self.state);
        while st.in_flight.len() >= max.max(1) {
            if flags.is_cancelled() {
                return false;
            }
            st = self.wait(st, Some(CHECK)).0;
        }
        if flags.is_cancelled() {
            return false;
        }
        st.in_flight.push(Arc::clone(flags));
        true
    }

    /// A concurrent call ended (see [`JobQueue::begin_concurrent`]).
    pub(crate) fn end_concurrent(&self, flags: &Arc<CallFlags>) {
        let mut st = lock(&self.state);
        st.in_flight.retain(|f| !Arc::ptr_eq(f, flags));
        self.notify(st);
    }

    /// Waits until no concurrent call runs, or `deadline` passes; true when none runs.
    pub(crate) fn wait_in_flight(&self, deadline: Instant) -> bool {
        let mut st = lock(&self.state);
        loop {
            if st.in_flight.is_empty() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            st = self.wait(st, Some(deadline - now)).0;
        }
    }

    /// Waits until the worker is idle with nothing queued or running, or `deadline` passes.
    pub(crate) fn wait_idle(&self, deadline: Instant) -> bool {
        let mut st = lock(&self.state);
        loop {
            if st.idle && st.jobs.is_empty() && st.in_flight.is_empty() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            st = self.wait(st, Some(deadline - now)).0;
        }
    }

    /// Takes the queued jobs out of the queue, with the flags of the running calls.
    pub(crate) fn take_work(&self) -> (Vec<Arc<CallFlags>>, VecDeque<J>) {
        let taken = {
            let mut st = lock(&self.state);
            let mut running = st.in_flight.clone();
            running.extend(st.running.clone());
            (running, std::mem::take(&mut st.jobs))
        };
        self.changed.notify_all();
        taken
    }

    /// The output is dead: stop taking jobs, and cancel the running and the queued ones without
    /// answering them. Runs inside a failed write, which may hold the running call's write lock,
    /// hence the unordered cancel.
    pub(crate) fn abandon_quietly(&self, end: ServeEnd) {
        self.set_end(end);
        self.close();
        let (running, queued) = self.take_work();
        for flags in running {
            flags.cancel_unordered();
        }
        for job in queued {
            job.flags().cancel_unordered();
        }
    }
}
