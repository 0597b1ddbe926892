//! The fastest possible peer: answers every request with a fixed result, without parsing it.
//! It measures the client's own ceiling, the figure below which a server's numbers mean
//! something:
//!
//! ```text
//! cargo build --release -p mcpline-bench --example responder
//! target/release/mcpline-bench pipelined -n 1000000 -- target/release/examples/responder
//! ```

use std::io::{self, BufRead, BufReader, BufWriter, Write};

fn main() -> io::Result<()> {
    let mut input = BufReader::with_capacity(1 << 16, io::stdin().lock());
    let mut output = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        // Requests carry `"id":<digits>`; notifications carry no id and get no answer.
        let Some(at) = line.windows(5).position(|w| w == b"\"id\":") else {
            continue;
        };
        let digits = &line[at + 5..];
        let len = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        output.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":")?;
        output.write_all(&digits[..len])?;
        output.write_all(b",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"3\"}]}}\n")?;
        // Flush once nothing more is waiting, so that lock-step calls are answered at once.
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
}
