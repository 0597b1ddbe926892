//! The `http` mode: `tools/call` requests over Streamable HTTP from concurrent clients, each a
//! thread with its own HTTP/1.1 keep-alive connection.
//!
//! Revision 2026-07-28 sends every request on its own (no handshake, no session): the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers, and the revision and client
//! capabilities in the request's `_meta`. A handshake revision (2025-06-18) makes every client
//! `initialize` a session of its own first and send its `Mcp-Session-Id` (when the server
//! gives one) and `MCP-Protocol-Version` with each call.
//!
//! Responses may come as `application/json` (with `Content-Length` or chunked) or as an SSE
//! stream, whose `data:` events are searched for the response. Every response is checked once
//! the clock has stopped.

use std::fmt::Write as _;
use std::io::Write;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::calls::{CallTemplate, Expect, check_replies};
use crate::modes::percentile;
use crate::server::excerpt;
use crate::wire::{Conn, Status, Url, sse_response};

/// The revision whose requests stand alone; the others negotiate a session first.
const STATELESS_REVISION: &str = "2026-07-28";
const HANDSHAKE_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// What a client that started well reports when another did not.
const ANOTHER_FAILED: &str = "another client failed to start";

/// What every client of an `http` run does.
pub(crate) struct HttpSetup {
    pub(crate) url: Url,
    pub(crate) clients: usize,
    pub(crate) revision: String,
    pub(crate) timeout: Duration,
    pub(crate) tool: String,
    pub(crate) args: Value,
    pub(crate) expect: Expect,
}

impl HttpSetup {
    pub(crate) fn check_revision(revision: &str) -> Result<(), String> {
        if revision == STATELESS_REVISION || HANDSHAKE_REVISIONS.contains(&revision) {
            Ok(())
        } else {
            Err(format!(
                "--revision takes {STATELESS_REVISION} or one of {}, not {revision}",
                HANDSHAKE_REVISIONS.join(", ")
            ))
        }
    }

    fn stateless(&self) -> bool {
        self.revision == STATELESS_REVISION
    }

    /// The request body's template: 2026-07-28 carries the revision in `_meta`.
    fn call(&self) -> CallTemplate {
        let mut params = json!({ "name": self.tool, "arguments": self.args });
        if self.stateless() {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": STATELESS_REVISION,
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        CallTemplate::with_params(&params)
    }
}

/// `total` calls spread over the clients (the first ones take one more when it does not divide)
/// after `warmup` untimed calls spread the same way; the clock runs from the moment every
/// client is connected and warmed up to the last response.
pub(crate) fn run(setup: &HttpSetup, warmup: usize, total: usize) -> Result<Value, String> {
    let clients = setup.clients;
    if clients == 0 {
        return Err("--clients must be at least 1".into());
    }
    let call = setup.call();
    let barrier = Barrier::new(clients + 1);
    let failed = AtomicBool::new(false);
    let (t0, runs) = thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|i| {
                let (call, barrier, failed) = (&call, &barrier, &failed);
                let warm = share(warmup, clients, i, 1);
                let timed = share(total, clients, i, warmup as u64 + 1);
                scope.spawn(move || client(setup, call, warm, timed, barrier, failed))
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        let runs: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a client panicked".into())))
            .collect();
        (t0, runs)
    });
    // The error of the client that failed, rather than the others' note that one did.
    let own = runs
        .iter()
        .find_map(|r| r.as_ref().err().filter(|e| *e != ANOTHER_FAILED));
    if let Some(error) = own {
        return Err(error.clone());
    }
    let runs = runs.into_iter().collect::<Result<Vec<_>, _>>()?;
    let end = runs.iter().filter_map(|r| r.end).max().unwrap_or(t0);
    let elapsed = end.saturating_duration_since(t0);
    // The clock has stopped: check every response.
    let mut warm_lines = Vec::new();
    let mut lines = Vec::new();
    let mut not_ok = 0;
    for run in &runs {
        run.warm.normalise(&mut warm_lines, setup.expect)?;
        not_ok += run.timed.normalise(&mut lines, setup.expect)?;
    }
    check_replies(&warm_lines, 1, warmup, setup.expect)?;
    let errors = check_replies(&lines, warmup as u64 + 1, total, setup.expect)?;
    let mut latencies: Vec<Duration> = runs.iter().flat_map(|r| r.latencies.clone()).collect();
    latencies.sort_unstable();
    let us = |p: f64| percentile(&latencies, p).as_secs_f64() * 1e6;
    let mean = latencies.iter().sum::<Duration>().as_secs_f64() * 1e6 / total.max(1) as f64;
    Ok(json!({
        "url": format!("http://{}{}", setup.url.authority, setup.url.path),
        "revision": setup.revision,
        "clients": clients,
        "count": total,
        "warmup": warmup,
        "errors": errors,
        "not_200": not_ok,
        "reconnects": runs.iter().map(|r| r.reconnects).sum::<usize>(),
        "seconds": elapsed.as_secs_f64(),
        "requests_per_s": total as f64 / elapsed.as_secs_f64(),
        "p50_us": us(50.0),
        "p90_us": us(90.0),
        "p99_us": us(99.0),
        "max_us": us(100.0),
        "mean_us": mean,
    }))
}

/// Client `i`'s part of `total` calls: how many, and the first request id.
fn share(total: usize, clients: usize, i: usize, first: u64) -> (u64, usize) {
    let (each, rest) = (total / clients, total % clients);
    let start = i * each + i.min(rest);
    (first + start as u64, each + usize::from(i < rest))
}

/// What one client got back: bodies back to back, with where each ends.
#[derive(Default)]
struct Replies {
    bodies: Vec<u8>,
    ends: Vec<(usize, Status)>,
}

impl Replies {
    /// Appends each response's JSON-RPC message to `lines`, one per line, as `check_replies`
    /// takes them. An HTTP status other than 200 fails `--expect ok`; otherwise such responses
    /// are counted (their bodies must still be JSON-RPC messages).
    fn normalise(&self, lines: &mut Vec<u8>, expect: Expect) -> Result<usize, String> {
        let mut start = 0;
        let mut refused = 0;
        for &(end, status) in &self.ends {
            let body = &self.bodies[start..end];
            start = end;
            if status.code != 200 {
                if expect == Expect::Ok {
                    return Err(format!(
                        "HTTP {} for a call: {}",
                        status.code,
                        excerpt(body)
                    ));
                }
                refused += 1;
            }
            let message = if status.sse {
                sse_response(body)?
            } else {
                serde_json::from_slice(body)
                    .map_err(|e| format!("a response body is not JSON ({e}): {}", excerpt(body)))?
            };
            lines.extend_from_slice(message.to_string().as_bytes());
            lines.push(b'\n');
        }
        Ok(refused)
    }
}

struct ClientRun {
    warm: Replies,
    timed: Replies,
    latencies: Vec<Duration>,
    /// When its last response was in (`None`: it had no calls).
    end: Option<Instant>,
    reconnects: usize,
}

/// One client: connects (and initialises a session), sends its warm-up calls, waits at the
/// barrier with every other client and the clock, then sends its timed calls one at a time.
fn client(
    setup: &HttpSetup,
    call: &CallTemplate,
    (warm_first, warm_count): (u64, usize),
    (first, count): (u64, usize),
    barrier: &Barrier,
    failed: &AtomicBool,
) -> Result<ClientRun, String> {
    let ready = Client::connect(setup, call).and_then(|mut c| {
        let mut warm = Replies::default();
        c.calls(warm_first, warm_count, &mut warm, None)?;
        Ok((c, warm))
    });
    if ready.is_err() {
        failed.store(true, Ordering::SeqCst);
    }
    // Every client reaches the barrier, failed or not, so that none waits forever.
    barrier.wait();
    let (mut c, warm) = ready?;
    if failed.load(Ordering::SeqCst) {
        return Err(ANOTHER_FAILED.into());
    }
    let mut timed = Replies::default();
    timed.bodies.reserve(count * 128);
    timed.ends.reserve(count);
    let mut latencies = Vec::with_capacity(count);
    c.calls(first, count, &mut timed, Some(&mut latencies))?;
    let end = (count > 0).then(Instant::now);
    Ok(ClientRun {
        warm,
        timed,
        latencies,
        end,
        reconnects: c.reconnects,
    })
}

/// A client's connection, session and request buffers.
struct Client<'a> {
    setup: &'a HttpSetup,
    call: &'a CallTemplate,
    conn: Conn,
    /// The request head up to (not including) `Content-Length`.
    head: String,
    body: String,
    request: Vec<u8>,
    reconnects: usize,
}

impl<'a> Client<'a> {
    fn connect(setup: &'a HttpSetup, call: &'a CallTemplate) -> Result<Self, String> {
        let conn = Conn::open(&setup.url, setup.timeout)?;
        let mut client = Self {
            setup,
            call,
            conn,
            head: String::new(),
            body: String::new(),
            request: Vec::new(),
            reconnects: 0,
        };
        client.head = client.head_for(None);
        if !setup.stateless() {
            let session = client.initialize()?;
            client.head = client.head_for(Some(session.as_deref()));
        }
        Ok(client)
    }

    /// The request head for this run's calls; after a handshake (`Some`), with
    /// `MCP-Protocol-Version` and the session id, if the server gave one.
    fn head_for(&self, session: Option<Option<&str>>) -> String {
        let url = &self.setup.url;
        let mut head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n",
            url.path, url.authority
        );
        if self.setup.stateless() {
            let _ = write!(
                head,
                "MCP-Protocol-Version: {STATELESS_REVISION}\r\nMcp-Method: tools/call\r\n\
                 Mcp-Name: {}\r\n",
                self.setup.tool
            );
        }
        if let Some(session) = session {
            let _ = write!(head, "MCP-Protocol-Version: {}\r\n", self.setup.revision);
            if let Some(id) = session {
                let _ = write!(head, "Mcp-Session-Id: {id}\r\n");
            }
        }
        head
    }

    /// `initialize`, then `notifications/initialized`; returns the session id, if any.
    fn initialize(&mut self) -> Result<Option<String>, String> {
        let body = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{{\
             \"protocolVersion\":\"{}\",\"capabilities\":{{}},\
             \"clientInfo\":{{\"name\":\"mcpline-bench\",\"version\":\"{}\"}}}}}}",
            self.setup.revision,
            env!("CARGO_PKG_VERSION")
        );
        let mut reply = Vec::new();
        let status = self.exchange(&self.head.clone(), &body, &mut reply)?;
        let message = if status.sse {
            sse_response(&reply)?
        } else {
            serde_json::from_slice(&reply).map_err(|e| {
                format!(
                    "the initialize answer is not JSON ({e}): {}",
                    excerpt(&reply)
                )
            })?
        };
        if status.code != 200 || message.get("id") != Some(&Value::from(0)) {
            return Err(format!(
                "initialize was answered with HTTP {}: {}",
                status.code,
                excerpt(&reply)
            ));
        }
        if message.get("result").is_none() {
            return Err(format!(
                "initialize was not answered with a result: {}",
                excerpt(&reply)
            ));
        }
        let session = self.conn.session.take();
        let head = self.head_for(Some(session.as_deref()));
        reply.clear();
        let body = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
        let status = self.exchange(&head, body, &mut reply)?;
        if !(200..300).contains(&status.code) {
            return Err(format!(
                "notifications/initialized was answered with HTTP {}: {}",
                status.code,
                excerpt(&reply)
            ));
        }
        Ok(session)
    }

    /// Sends calls `first..first + count` one at a time, appending their bodies to `replies`
    /// and, when asked, each one's latency: from just before its request is written to just
    /// after its response's last byte is read.
    fn calls(
        &mut self,
        first: u64,
        count: usize,
        replies: &mut Replies,
        mut latencies: Option<&mut Vec<Duration>>,
    ) -> Result<(), String> {
        for id in (first..).take(count) {
            self.body.clear();
            self.call.append(&mut self.body, id);
            self.body.pop(); // the template's newline
            self.request.clear();
            self.request.extend_from_slice(self.head.as_bytes());
            let _ = write!(self.request, "Content-Length: {}\r\n\r\n", self.body.len());
            self.request.extend_from_slice(self.body.as_bytes());
            let sent = Instant::now();
            let status = self.roundtrip(&mut replies.bodies)?;
            if let Some(latencies) = latencies.as_deref_mut() {
                latencies.push(sent.elapsed());
            }
            replies.ends.push((replies.bodies.len(), status));
        }
        Ok(())
    }

    /// One request with the given head and body; the response body is appended to `reply`.
    fn exchange(&mut self, head: &str, body: &str, reply: &mut Vec<u8>) -> Result<Status, String> {
        self.request.clear();
        self.request.extend_from_slice(head.as_bytes());
        let _ = write!(self.request, "Content-Length: {}\r\n\r\n", body.len());
        self.request.extend_from_slice(body.as_bytes());
        self.roundtrip(reply)
    }

    /// Writes `self.request` and reads its response; reconnects afterwards when the server
    /// will not keep the connection open.
    fn roundtrip(&mut self, reply: &mut Vec<u8>) -> Result<Status, String> {
        self.conn
            .stream
            .write_all(&self.request)
            .map_err(|e| format!("sending a request: {e}"))?;
        let status = self.conn.read_response(reply)?;
        if !self.conn.open {
            self.conn = Conn::open(&self.setup.url, self.setup.timeout)?;
            self.reconnects += 1;
        }
        Ok(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_id_once() {
        let parts: Vec<_> = (0..3).map(|i| share(10, 3, i, 5)).collect();
        assert_eq!(parts, [(5, 4), (9, 3), (12, 3)]);
        assert_eq!(share(2, 4, 3, 1), (3, 0));
    }
}
