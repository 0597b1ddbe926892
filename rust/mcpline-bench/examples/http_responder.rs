//! The fastest possible HTTP peer: answers every POST with a fixed result and the request's id,
//! without parsing anything else, one thread per connection. It measures the `http` mode's own
//! ceiling:
//!
//! ```text
//! cargo build --release -p mcpline-bench --example http_responder
//! target/release/examples/http_responder 8123 &
//! target/release/mcpline-bench http --url http://127.0.0.1:8123/mcp --clients 16 -n 200000
//! ```

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;

fn main() -> io::Result<()> {
    let port = std::env::args().nth(1).unwrap_or_else(|| "8123".into());
    let listener = TcpListener::bind(("127.0.0.1", port.parse().unwrap_or(8123)))?;
    for stream in listener.incoming() {
        let stream = stream?;
        thread::spawn(move || {
            // A connection that breaks ends its thread; the client reports it.
            let _ = serve(stream);
        });
    }
    Ok(())
}

fn serve(mut stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buf = vec![0; 1 << 16];
    let (mut start, mut end) = (0, 0);
    let mut reply = Vec::with_capacity(512);
    loop {
        // The head, then `Content-Length` bytes of body.
        let head_end = loop {
            if let Some(at) = buf[start..end].windows(4).position(|w| w == b"\r\n\r\n") {
                break start + at + 4;
            }
            if end == buf.len() {
                buf.copy_within(start..end, 0);
                (start, end) = (0, end - start);
            }
            match stream.read(&mut buf[end..])? {
                0 => return Ok(()),
                n => end += n,
            }
        };
        let head = String::from_utf8_lossy(&buf[start..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while end - head_end < length {
            match stream.read(&mut buf[end..])? {
                0 => return Ok(()),
                n => end += n,
            }
        }
        let body = &buf[head_end..head_end + length];
        let id = body
            .windows(5)
            .position(|w| w == b"\"id\":")
            .map(|at| {
                let digits = &body[at + 5..];
                &digits[..digits.iter().take_while(|b| b.is_ascii_digit()).count()]
            })
            .unwrap_or(b"0");
        let mut json = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
        json.extend_from_slice(id);
        json.extend_from_slice(b",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"3\"}]}}");
        reply.clear();
        reply.extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n");
        reply.extend_from_slice(format!("content-length: {}\r\n\r\n", json.len()).as_bytes());
        reply.extend_from_slice(&json);
        stream.write_all(&reply)?;
        start = head_end + length;
        if start == end {
            (start, end) = (0, 0);
        }
    }
}
