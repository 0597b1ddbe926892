//! The four measurements. Each returns its figures as one JSON object.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::calls::{CallTemplate, Expect, check_replies};
use crate::server::{Server, status_kib};

/// How a server is started and what each call sends and must get back.
pub(crate) struct Setup {
    pub(crate) argv: Vec<String>,
    pub(crate) inherit_stderr: bool,
    pub(crate) timeout: Duration,
    pub(crate) call: CallTemplate,
    pub(crate) expect: Expect,
}

impl Setup {
    fn ready_server(&self) -> Result<Server, String> {
        let mut server = Server::spawn(&self.argv, self.inherit_stderr, self.timeout)?;
        server.initialize()?;
        Ok(server)
    }
}

/// Spawn → `initialize` answered, `starts` times, each with a fresh process.
pub(crate) fn start(setup: &Setup, starts: usize) -> Result<Value, String> {
    let mut samples = Vec::with_capacity(starts);
    for _ in 0..starts {
        let t0 = Instant::now();
        let server = setup.ready_server()?;
        samples.push(t0.elapsed());
        server.close();
    }
    let ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    samples.sort_unstable();
    Ok(json!({
        "starts": starts,
        "median_ms": percentile(&samples, 50.0).as_secs_f64() * 1e3,
        "min_ms": samples.first().map_or(0.0, |d| d.as_secs_f64() * 1e3),
        "samples_ms": ms,
    }))
}

/// One call at a time: each request is sent once the previous response is in. The latency of
/// a call runs from just before its write to just after its response line is read.
pub(crate) fn lockstep(setup: &Setup, warmup: usize, calls: usize) -> Result<Value, String> {
    let mut server = setup.ready_server()?;
    let mut request = String::new();
    let mut replies = Vec::new();
    let mut id = 1;
    for _ in 0..warmup {
        request.clear();
        setup.call.append(&mut request, id);
        server.send(request.as_bytes())?;
        server.read_line(&mut replies)?;
        id += 1;
    }
    check_replies(&replies, 1, warmup, setup.expect)?;
    replies.clear();
    let first = id;
    let mut latencies = Vec::with_capacity(calls);
    let t0 = Instant::now();
    for _ in 0..calls {
        request.clear();
        setup.call.append(&mut request, id);
        let sent = Instant::now();
        server.send(request.as_bytes())?;
        server.read_line(&mut replies)?;
        latencies.push(sent.elapsed());
        id += 1;
    }
    let elapsed = t0.elapsed();
    server.close();
    let errors = check_replies(&replies, first, calls, setup.expect)?;
    latencies.sort_unstable();
    let us = |p: f64| percentile(&latencies, p).as_secs_f64() * 1e6;
    let mean = latencies.iter().sum::<Duration>().as_secs_f64() * 1e6 / calls.max(1) as f64;
    Ok(json!({
        "calls": calls,
        "warmup": warmup,
        "errors": errors,
        "seconds": elapsed.as_secs_f64(),
        "calls_per_s": calls as f64 / elapsed.as_secs_f64(),
        "p50_us": us(50.0),
        "p90_us": us(90.0),
        "p99_us": us(99.0),
        "max_us": us(100.0),
        "mean_us": mean,
    }))
}

/// A writer thread sends all calls as fast as the pipe takes them while this thread reads the
/// responses; the clock runs from the first write to the last response.
pub(crate) fn pipelined(setup: &Setup, warmup: usize, calls: usize) -> Result<Value, String> {
    let mut server = setup.ready_server()?;
    if warmup > 0 {
        flood(&mut server, &setup.call, 1, warmup, setup.expect)?;
    }
    let run = flood(
        &mut server,
        &setup.call,
        warmup as u64 + 1,
        calls,
        setup.expect,
    )?;
    server.close();
    Ok(json!({
        "calls": calls,
        "warmup": warmup,
        "errors": run.errors,
        "seconds": run.elapsed.as_secs_f64(),
        "calls_per_s": calls as f64 / run.elapsed.as_secs_f64(),
    }))
}

/// All calls sent at once to a server that has just initialised, with its resident memory
/// sampled every millisecond meanwhile: idle RSS before, peak (`VmHWM`, or the highest sample)
/// after.
pub(crate) fn burst(setup: &Setup, calls: usize, settle: Duration) -> Result<Value, String> {
    let mut server = setup.ready_server()?;
    let pid = server.pid();
    thread::sleep(settle);
    let idle = status_kib(pid, "VmRSS");
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            let mut peak = 0;
            while !stop.load(Ordering::Relaxed) {
                peak = peak.max(status_kib(pid, "VmRSS").unwrap_or(0));
                thread::sleep(Duration::from_millis(1));
            }
            peak
        })
    };
    let run = flood(&mut server, &setup.call, 1, calls, setup.expect);
    let hwm = status_kib(pid, "VmHWM");
    let after = status_kib(pid, "VmRSS");
    stop.store(true, Ordering::Relaxed);
    let sampled = sampler.join().map_err(|_| "the memory sampler panicked")?;
    let run = run?;
    server.close();
    Ok(json!({
        "calls": calls,
        "errors": run.errors,
        "seconds": run.elapsed.as_secs_f64(),
        "calls_per_s": calls as f64 / run.elapsed.as_secs_f64(),
        "idle_rss_kib": idle,
        // The kernel's RSS counters are summed lazily, so a sample can exceed VmHWM a little.
        "peak_rss_kib": hwm.map(|hwm| hwm.max(sampled)),
        "vm_hwm_kib": hwm,
        "sampled_peak_rss_kib": sampled,
        "after_rss_kib": after,
    }))
}

struct Flood {
    elapsed: Duration,
    errors: usize,
}

/// Sends `count` calls from a writer thread and reads as many responses here, then checks them.
fn flood(
    server: &mut Server,
    call: &CallTemplate,
    first: u64,
    count: usize,
    expect: Expect,
) -> Result<Flood, String> {
    let payload = call.batch(first, count);
    let mut replies = Vec::with_capacity(count * 128);
    let mut stdin = server.take_stdin()?;
    let t0 = Instant::now();
    let writer = thread::spawn(move || stdin.write_all(payload.as_bytes()).map(|()| stdin));
    let read = server.read_lines(&mut replies, count);
    let elapsed = t0.elapsed();
    read?;
    let stdin = writer
        .join()
        .map_err(|_| "the writer thread panicked")?
        .map_err(|e| format!("writing to the server: {e}"))?;
    server.restore_stdin(stdin);
    let errors = check_replies(&replies, first, count, expect)?;
    Ok(Flood { elapsed, errors })
}

/// Nearest-rank percentile of sorted samples.
pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let ms: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&ms, 50.0), Duration::from_millis(50));
        assert_eq!(percentile(&ms, 99.0), Duration::from_millis(99));
        assert_eq!(percentile(&ms, 100.0), Duration::from_millis(100));
        assert_eq!(percentile(&ms[..1], 50.0), Duration::from_millis(1));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
    }
}
