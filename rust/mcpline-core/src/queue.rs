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
    /// The worker runs a call while it still holds the turn (lent; see [`JobQueue::pop`]).
    lent: bool,
    /// How many calls ran on a lent turn: names the call an alarm was armed for.
    lends: u64,
    /// The alarm is armed, for the lent call with this number (or for the wait after it). It is
    /// armed only when it is not already: a client sending one request at a time costs one
    /// timer setting per alarm period, not two per call.
    alarm_for: Option<u64>,
    /// The worker waits for input with fds 1 and 2 still parked: when the alarm rings first,
    /// the worker is woken to settle them.
    settle_wanted: bool,
    /// The alarm rang while the worker waited parked: it settles before it waits again.
    settle_due: bool,
    /// The reader thread is waiting for input.
    reader_waiting: bool,
}

/// How the reading turn moves between the worker and the reader thread (see [`JobQueue::pop`]).
pub(crate) trait Turn {
    /// Interrupts the reader thread's wait (for input, or for the turn to come back).
    fn wake_reader(&self);

    /// Interrupts the worker's wait for input (to settle parked streams).
    fn wake_worker(&self);

    /// Whether the worker may keep the turn while it runs a call: false when it must go back at
    /// once (no alarm here, or the client is pipelining and the reader should read on).
    fn can_lend(&self) -> bool;

    /// Sets the alarm the reader thread waits on to ring once, one lending period from now.
    fn arm(&self);
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
                lends: 0,
                alarm_for: None,
                settle_wanted: false,
                settle_due: false,
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
    /// The worker keeps the turn while it runs the call, lent: the reader thread takes it back
    /// when the call runs long ([`JobQueue::alarm_rang`]), so pings and cancellations are read
    /// while a call runs, and a quick call wakes nobody.
    pub(crate) fn pop(&self, poll: Option<Duration>, turn: Option<&dyn Turn>) -> Popped<J> {
        let mut st = lock(&self.state);
        loop {
            if let Some(job) = st.jobs.pop_front() {
                st.running = Some(Arc::clone(job.flags()));
                st.idle = false;
                // A call starts: the streams are its business now.
                st.settle_wanted = false;
                st.settle_due = false;
                if st.worker_reads {
                    if let Some(turn) = turn.filter(|turn| turn.can_lend()) {
                        st.lent = true;
                        st.lends += 1;
                        if st.alarm_for.is_none() {
                            st.alarm_for = Some(st.lends);
                            turn.arm();
                        }
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
            // A lent call ended before the alarm took the turn back: the worker reads on (the
            // alarm stays set; when it rings it finds nothing to do, or a later call).
            st.lent = false;
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

    /// The reader thread's alarm rang (or its wait was interrupted). A call that has held the
    /// lent turn since the alarm was armed has run a whole period: the reader thread takes the
    /// turn back. A call lent since then gets a period of its own (so a long call waits at most
    /// two periods to lose the turn). A worker waiting for input with fds 1 and 2 still parked
    /// is woken to settle them.
    pub(crate) fn alarm_rang(&self, turn: &dyn Turn) {
        let mut st = lock(&self.state);
        let armed_for = st.alarm_for.take();
        if st.lent {
            if armed_for == Some(st.lends) {
                st.lent = false;
                st.worker_reads = false;
            } else {
                st.alarm_for = Some(st.lends);
                turn.arm();
            }
        } else if st.settle_wanted {
            st.settle_wanted = false;
            st.settle_due = true;
            turn.wake_worker();
        }
    }

    /// The worker is about to wait for input with fds 1 and 2 parked on the last call's capture
    /// file. True when they may stay parked for now (another request is likely to follow at
    /// once, and settling and parking again costs four `dup2`): the alarm is then set, and when
    /// it rings before a call starts, the worker is woken and this answers false.
    pub(crate) fn defer_settle(&self, turn: &dyn Turn) -> bool {
        let mut st = lock(&self.state);
        if std::mem::take(&mut st.settle_due) || !turn.can_lend() {
            return false;
        }
        st.settle_wanted = true;
        if st.alarm_for.is_none() {
            st.alarm_for = Some(st.lends);
            turn.arm();
        }
        true
    }

    /// Whether the worker, about to look for work, may have to wait on the queue (no job queued,
    /// and the reader thread holds the input).
    pub(crate) fn may_wait(&self) -> bool {
        let st = lock(&self.state);
        st.jobs.is_empty() && !st.worker_reads
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

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::Arc;

    use super::{JobQueue, Popped, Queued, ReaderTurn, Turn};
    use crate::flags::CallFlags;

    struct Job(Arc<CallFlags>);

    impl Queued for Job {
        fn flags(&self) -> &Arc<CallFlags> {
            &self.0
        }
    }

    fn job() -> Job {
        Job(Arc::new(CallFlags::default()))
    }

    /// Counts what the queue asks of the threads and the alarm.
    #[derive(Default)]
    struct Counted {
        pipelining: Cell<bool>,
        arms: Cell<u32>,
        reader_wakes: Cell<u32>,
        worker_wakes: Cell<u32>,
    }

    impl Turn for Counted {
        fn wake_reader(&self) {
            self.reader_wakes.set(self.reader_wakes.get() + 1);
        }
        fn wake_worker(&self) {
            self.worker_wakes.set(self.worker_wakes.get() + 1);
        }
        fn can_lend(&self) -> bool {
            !self.pipelining.get()
        }
        fn arm(&self) {
            self.arms.set(self.arms.get() + 1);
        }
    }

    /// A queue whose idle worker has taken the reading turn.
    fn worker_reading(turn: &Counted) -> JobQueue<Job> {
        let queue = JobQueue::new(8);
        queue.reader_waiting(true);
        assert!(matches!(queue.pop(None, Some(turn)), Popped::Read));
        queue.reader_waiting(false);
        queue
    }

    /// The worker reads one call and runs it on the lent turn.
    fn lend_one(queue: &JobQueue<Job>, turn: &Counted) {
        assert!(queue.push(job()).is_ok());
        assert!(matches!(queue.pop(None, Some(turn)), Popped::Job(_)));
    }

    fn reader_may_read(queue: &JobQueue<Job>) -> bool {
        matches!(queue.reader_turn(), ReaderTurn::Read)
    }

    #[test]
    fn quick_calls_on_a_lent_turn_set_the_alarm_once_and_wake_nobody() {
        let turn = Counted::default();
        let queue = worker_reading(&turn);
        let woken = turn.reader_wakes.get();
        for _ in 0..100 {
            lend_one(&queue, &turn);
            assert!(matches!(queue.pop(None, Some(&turn)), Popped::Read));
        }
        assert_eq!(turn.arms.get(), 1);
        assert_eq!(turn.reader_wakes.get(), woken);
        assert_eq!(turn.worker_wakes.get(), 0);
        assert!(!reader_may_read(&queue));
    }

    #[test]
    fn a_call_lent_since_the_alarm_was_set_gives_the_turn_back_when_it_rings() {
        let turn = Counted::default();
        let queue = worker_reading(&turn);
        lend_one(&queue, &turn);
        queue.alarm_rang(&turn);
        assert!(reader_may_read(&queue));
        assert_eq!(turn.arms.get(), 1);
    }

    #[test]
    fn a_call_lent_after_the_alarm_was_set_gets_a_period_of_its_own() {
        let turn = Counted::default();
        let queue = worker_reading(&turn);
        lend_one(&queue, &turn);
        assert!(matches!(queue.pop(None, Some(&turn)), Popped::Read));
        lend_one(&queue, &turn);
        queue.alarm_rang(&turn);
        assert!(
            !reader_may_read(&queue),
            "the second call has not run a period yet"
        );
        assert_eq!(turn.arms.get(), 2);
        queue.alarm_rang(&turn);
        assert!(reader_may_read(&queue));
    }

    #[test]
    fn an_alarm_that_rings_after_the_lent_call_ended_takes_nothing_back() {
        let turn = Counted::default();
        let queue = worker_reading(&turn);
        lend_one(&queue, &turn);
        assert!(matches!(queue.pop(None, Some(&turn)), Popped::Read));
        queue.alarm_rang(&turn);
        assert!(!reader_may_read(&queue));
        assert_eq!(turn.worker_wakes.get(), 0);
        // The next call sets the alarm afresh.
        lend_one(&queue, &turn);
        assert_eq!(turn.arms.get(), 2);
    }

    #[test]
    fn a_worker_waiting_with_parked_streams_is_woken_to_settle_them_when_the_alarm_rings() {
        let turn = Counted::default();
        let queue = worker_reading(&turn);
        assert!(queue.defer_settle(&turn));
        assert_eq!(turn.arms.get(), 1);
        queue.alarm_rang(&turn);
        assert_eq!(turn.worker_wakes.get(), 1);
        assert!(
            !queue.defer_settle(&turn),
            "woken to settle, the worker settles"
        );
        assert!(
            queue.defer_settle(&turn),
            "settled once; parked again later, it may wait"
        );
    }

    #[test]
    fn a_call_that_starts_first_makes_the_pending_settle_moot() {
        let turn = Counted::default();
        let queue = worker_reading(&turn);
        assert!(queue.defer_settle(&turn));
        lend_one(&queue, &turn);
        queue.alarm_rang(&turn);
        assert_eq!(turn.worker_wakes.get(), 0);
    }

    #[test]
    fn a_pipelining_client_gets_no_lent_turn_and_no_deferred_settle() {
        let turn = Counted::default();
        let queue = worker_reading(&turn);
        turn.pipelining.set(true);
        lend_one(&queue, &turn);
        assert!(reader_may_read(&queue));
        assert_eq!(turn.arms.get(), 0);
        assert!(!queue.defer_settle(&turn));
    }
}
