//! The HTTP/1.1 side of the `http` mode: the server's URL, one keep-alive connection, and
//! reading a response off it (`Content-Length`, chunked, or until close), including the
//! JSON-RPC response inside an SSE stream.

use std::io::Read;
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

use crate::server::excerpt;

/// The most a response head may take.
const MAX_HEAD: usize = 64 * 1024;

/// Where the server listens, from `--url http://HOST:PORT/PATH`.
pub(crate) struct Url {
    pub(crate) host: String,
    pub(crate) port: u16,
    /// `HOST:PORT` as written, for the `Host` header.
    pub(crate) authority: String,
    pub(crate) path: String,
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

#[derive(Clone, Copy)]
pub(crate) struct Status {
    pub(crate) code: u16,
    pub(crate) sse: bool,
}

/// The JSON-RPC response among an SSE stream's `data:` events (notifications are skipped).
pub(crate) fn sse_response(body: &[u8]) -> Result<Value, String> {
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

/// A connection and the bytes read from it but not yet used (`buf[start..end]`).
pub(crate) struct Conn {
    pub(crate) stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// False once the server said it closes the connection after this response.
    pub(crate) open: bool,
    /// The last `Mcp-Session-Id` the server sent.
    pub(crate) session: Option<String>,
}

impl Conn {
    pub(crate) fn open(url: &Url, timeout: Duration) -> Result<Self, String> {
        let stream = TcpStream::connect((url.host.as_str(), url.port))
            .map_err(|e| format!("cannot connect to {}: {e}", url.authority))?;
        let timeout = Some(timeout);
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
    pub(crate) fn read_response(&mut self, out: &mut Vec<u8>) -> Result<Status, String> {
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
