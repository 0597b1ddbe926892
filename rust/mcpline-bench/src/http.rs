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
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::calls::{CallTemplate, Expect, check_replies};
use crate::modes::percentile;
use crate::server::excerpt;

/// The revision whose requests stand alone; the others negotiate a session first.
const STATELESS_REVISION: &str = "2026-07-28";
const HANDSHAKE_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// What a client that started well reports when another did not.
const ANOTHER_FAILED: &str = "another client failed to start";

/// The most a response head may take.
const MAX_HEAD: usize = 64 * 1024;

/// Where the server listens, from `--url http://HOST:PORT/PATH`.
pub(crate) struct Url {
    host: String,
    port: u16,
    /// `HOST:PORT` as written, for the `Host` header.
    authority: String,
    path: String,
}

impl Url {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let rest = text
            .strip_prefix("http://")
            .ok_or_else(|| format!("--url takes http://HOST:PORT/PATH (no https), not {text}"))?;
        let (authority, path) = match rest.find('/') {
            Some(at) => rest.split_at(at),
            None => (rest, "/"),
        };
        let bad = || format!("--url: cannot read the host and port of {text}");
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (host, tail) = v6.split_once(']').ok_or_else(bad)?;
                (host, tail.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            },
        };
        let port = match port {
            Some(port) => port.parse().map_err(|_| bad())?,
            None => 80,
        };
        if host.is_empty() {
            return Err(bad());
        }
        Ok(Self {
            host: host.to_owned(),
            port,
            authority: authority.to_owned(),
            path: path.to_owned(),
        })
    }
}

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

#[derive(Clone, Copy)]
struct Status {
    code: u16,
    sse: bool,
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

/// The JSON-RPC response among an SSE stream's `data:` events (notifications are skipped).
fn sse_response(body: &[u8]) -> Result<Value, String> {
    let text = String::from_utf8_lossy(body);
    let mut found = None;
    let mut data = String::new();
    let mut take = |data: &mut String| -> Result<(), String> {
        if data.is_empty() {
            return Ok(());
        }
        let message: Value = serde_json::from_str(data).map_err(|e| {
            format!(
                "an SSE event is not JSON ({e}): {}",
                excerpt(data.as_bytes())
            )
        })?;
        data.clear();
        let is_response = message.get("method").is_none()
            && message.get("id").is_some()
            && (message.get("result").is_some() || message.get("error").is_some());
        if is_response && found.replace(message).is_some() {
            return Err(format!(
                "an SSE stream holds two responses: {}",
                excerpt(body)
            ));
        }
        Ok(())
    };
    // Lines end with CRLF, LF or CR; a blank line ends an event.
    for line in text.split("\r\n").flat_map(|l| l.split(['\n', '\r'])) {
        if line.is_empty() {
            take(&mut data)?;
        } else if let Some(value) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    take(&mut data)?;
    found.ok_or_else(|| format!("an SSE stream without a response: {}", excerpt(body)))
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
        let conn = Conn::open(setup)?;
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
            self.conn = Conn::open(self.setup)?;
            self.reconnects += 1;
        }
        Ok(status)
    }
}

/// A connection and the bytes read from it but not yet used (`buf[start..end]`).
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// False once the server said it closes the connection after this response.
    open: bool,
    /// The last `Mcp-Session-Id` the server sent.
    session: Option<String>,
}

impl Conn {
    fn open(setup: &HttpSetup) -> Result<Self, String> {
        let url = &setup.url;
        let stream = TcpStream::connect((url.host.as_str(), url.port))
            .map_err(|e| format!("cannot connect to {}: {e}", url.authority))?;
        let timeout = Some(setup.timeout);
        stream
            .set_nodelay(true)
            .and_then(|()| stream.set_read_timeout(timeout))
            .and_then(|()| stream.set_write_timeout(timeout))
            .map_err(|e| format!("setting up the connection: {e}"))?;
        Ok(Self {
            stream,
            buf: vec![0; 64 * 1024],
            start: 0,
            end: 0,
            open: true,
            session: None,
        })
    }

    /// Reads more bytes into the buffer; `Ok(false)` at end of stream.
    fn fill(&mut self) -> Result<bool, String> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                (self.start, self.end) = (0, self.end - self.start);
            } else {
                self.buf.resize(self.buf.len() * 2, 0);
            }
        }
        match self.stream.read(&mut self.buf[self.end..]) {
            Ok(0) => Ok(false),
            Ok(n) => {
                self.end += n;
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(true),
            Err(e) => Err(format!("reading a response: {e}")),
        }
    }

    fn must_fill(&mut self, what: &str) -> Result<(), String> {
        if self.fill()? {
            Ok(())
        } else {
            Err(format!("the server closed the connection {what}"))
        }
    }

    /// The next line (without its CRLF) as a range of `buf`, consumed.
    fn line(&mut self) -> Result<(usize, usize), String> {
        let mut from = self.start;
        loop {
            if let Some(at) = self.buf[from..self.end].iter().position(|&b| b == b'\n') {
                let line = (self.start, from + at);
                self.start = from + at + 1;
                let trimmed = if line.1 > line.0 && self.buf[line.1 - 1] == b'\r' {
                    line.1 - 1
                } else {
                    line.1
                };
                return Ok((line.0, trimmed));
            }
            if self.end - self.start > MAX_HEAD {
                return Err("a response line is longer than 64 KiB".into());
            }
            let seen = self.end - self.start;
            self.must_fill("mid-response")?;
            from = self.start + seen;
        }
    }

    /// Appends exactly `n` body bytes to `out`.
    fn take(&mut self, mut n: usize, out: &mut Vec<u8>) -> Result<(), String> {
        loop {
            let here = n.min(self.end - self.start);
            out.extend_from_slice(&self.buf[self.start..self.start + here]);
            self.start += here;
            n -= here;
            if n == 0 {
                return Ok(());
            }
            self.must_fill("mid-body")?;
        }
    }

    /// Reads one response: its head, then its body into `out` (by `Content-Length`, chunked,
    /// or up to the end of the connection).
    fn read_response(&mut self, out: &mut Vec<u8>) -> Result<Status, String> {
        let (code, framing, sse) = loop {
            let (code, framing, sse) = self.read_head()?;
            if !(100..200).contains(&code) {
                break (code, framing, sse);
            }
        };
        match framing {
            Framing::Length(n) => self.take(n, out)?,
            Framing::Chunked => loop {
                let (a, b) = self.line()?;
                let line = String::from_utf8_lossy(&self.buf[a..b]);
                let size = line.split(';').next().unwrap_or("").trim();
                let size = usize::from_str_radix(size, 16)
                    .map_err(|_| format!("a bad chunk size line: {line}"))?;
                if size == 0 {
                    // Trailers, then the blank line that ends the body.
                    while self.line().map(|(a, b)| b > a)? {}
                    break;
                }
                self.take(size, out)?;
                self.line()?;
            },
            Framing::UntilClose => {
                self.open = false;
                loop {
                    out.extend_from_slice(&self.buf[self.start..self.end]);
                    self.start = self.end;
                    if !self.fill()? {
                        break;
                    }
                }
            }
        }
        Ok(Status { code, sse })
    }

    /// The status line and the headers that matter here.
    fn read_head(&mut self) -> Result<(u16, Framing, bool), String> {
        let (a, b) = self.line()?;
        let status = &self.buf[a..b];
        let code = status
            .strip_prefix(b"HTTP/1.")
            .and_then(|rest| rest.get(2..5))
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .and_then(|digits| digits.parse::<u16>().ok())
            .ok_or_else(|| format!("not an HTTP/1.x status line: {}", excerpt(status)))?;
        let mut length = None;
        let mut chunked = false;
        let mut sse = false;
        let mut close = status.starts_with(b"HTTP/1.0");
        loop {
            let (a, b) = self.line()?;
            if a == b {
                break;
            }
            let header = &self.buf[a..b];
            let Some(colon) = header.iter().position(|&b| b == b':') else {
                return Err(format!("a bad header line: {}", excerpt(header)));
            };
            let name = &header[..colon];
            let value = String::from_utf8_lossy(&header[colon + 1..]);
            let value = value.trim();
            if name.eq_ignore_ascii_case(b"content-length") {
                length = Some(
                    value
                        .parse()
                        .map_err(|_| format!("a bad Content-Length: {value}"))?,
                );
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                chunked = value.to_ascii_lowercase().contains("chunked");
            } else if name.eq_ignore_ascii_case(b"content-type") {
                sse = value.to_ascii_lowercase().starts_with("text/event-stream");
            } else if name.eq_ignore_ascii_case(b"connection") {
                close = value.eq_ignore_ascii_case("close");
            } else if name.eq_ignore_ascii_case(b"mcp-session-id") {
                self.session = Some(value.to_owned());
            }
        }
        if close {
            self.open = false;
        }
        let framing = if chunked {
            Framing::Chunked
        } else if let Some(n) = length {
            Framing::Length(n)
        } else if code == 204 || code == 304 || (100..200).contains(&code) {
            Framing::Length(0)
        } else {
            Framing::UntilClose
        };
        Ok((code, framing, sse))
    }
}

enum Framing {
    Length(usize),
    Chunked,
    UntilClose,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let url = Url::parse("http://127.0.0.1:8123/mcp").expect("a URL");
        assert_eq!((url.host.as_str(), url.port), ("127.0.0.1", 8123));
        assert_eq!(
            (url.authority.as_str(), url.path.as_str()),
            ("127.0.0.1:8123", "/mcp")
        );
        let url = Url::parse("http://[::1]:9/").expect("a URL");
        assert_eq!(
            (url.host.as_str(), url.port, url.path.as_str()),
            ("::1", 9, "/")
        );
        let url = Url::parse("http://localhost").expect("a URL");
        assert_eq!((url.port, url.path.as_str()), (80, "/"));
        assert!(Url::parse("https://localhost/mcp").is_err());
        assert!(Url::parse("http://:80/mcp").is_err());
        assert!(Url::parse("http://host:port/mcp").is_err());
    }

    #[test]
    fn shares_cover_every_id_once() {
        let parts: Vec<_> = (0..3).map(|i| share(10, 3, i, 5)).collect();
        assert_eq!(parts, [(5, 4), (9, 3), (12, 3)]);
        assert_eq!(share(2, 4, 3, 1), (3, 0));
    }

    #[test]
    fn sse_streams_give_their_response() {
        let body = b"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\r\n\r\n\
                     : ping\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":3,\"result\":{}}\n\n";
        let reply = sse_response(body).expect("a response");
        assert_eq!(reply["id"], 3);
        assert!(sse_response(b"data: {\"method\":\"x\"}\n\n").is_err());
        let twice = b"data: {\"id\":1,\"result\":{}}\n\ndata: {\"id\":1,\"result\":{}}\n\n";
        assert!(sse_response(twice).is_err());
    }
}
