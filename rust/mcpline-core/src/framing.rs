//! Newline framing of the inbound byte stream.
//!
//! One JSON value per line. A trailing `\r` and a leading UTF-8 byte-order mark are stripped,
//! blank lines are skipped, and a line longer than the cap is dropped up to the next newline
//! (memory stays bounded) and reported so the caller can answer it.

use std::io::{self, Read};

/// Default cap on one inbound line: 64 MiB.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024 * 1024;

/// How much of an oversized line is kept to recover its id.
const HEAD_KEPT: usize = 4096;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One inbound frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// A complete line, without its terminator, `\r` or BOM.
    Line(Vec<u8>),
    /// A line longer than the cap: its length and its first bytes.
    Oversized {
        /// Total bytes in the line (without the terminator).
        len: u64,
        /// Its first few KiB, for recovering the request id.
        head: Vec<u8>,
    },
}

/// Splits a byte stream into frames.
pub struct LineReader<R> {
    inner: R,
    /// Zeroed once as it grows and then reused: the input lies in `buf[start..end]`, and what
    /// follows `end` is room for the next read (zeroing 64 KiB before every read cost more
    /// than a lone request's parse).
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// No newline in `buf[start..searched]` (a hint: used clamped to `start..=end`, and
    /// reset whenever the buffer is cleared or shifted).
    searched: usize,
    max_line: usize,
    eof: bool,
}

impl<R: Read> LineReader<R> {
    /// Wraps `inner`, refusing lines longer than `max_line` bytes.
    pub fn new(inner: R, max_line: usize) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            start: 0,
            end: 0,
            searched: 0,
            max_line: max_line.max(1),
            eof: false,
        }
    }

    /// The next frame, or `None` at end of input.
    ///
    /// # Errors
    /// Returns the underlying read error (interrupted reads are retried).
    pub fn next_frame(&mut self) -> io::Result<Option<Inbound>> {
        let mut skipping: Option<(u64, Vec<u8>)> = None;
        let mut scanned = self.searched.clamp(self.start, self.end);
        loop {
            if let Some(pos) = memchr(b'\n', &self.buf[scanned..self.end]).map(|p| p + scanned) {
                let line_start = self.start;
                self.start = pos + 1;
                if let Some((dropped, head)) = skipping.take() {
                    let len = dropped + (pos - line_start) as u64;
                    self.compact();
                    return Ok(Some(Inbound::Oversized { len, head }));
                }
                if pos - line_start > self.max_line {
                    let head = self.buf[line_start..pos.min(line_start + HEAD_KEPT)].to_vec();
                    let len = (pos - line_start) as u64;
                    self.compact();
                    return Ok(Some(Inbound::Oversized { len, head }));
                }
                if let Some(line) = clean(&self.buf[line_start..pos]) {
                    let line = line.to_vec();
                    self.compact();
                    return Ok(Some(Inbound::Line(line)));
                }
                scanned = self.start;
                continue;
            }
            scanned = self.end;
            self.searched = scanned;
            let pending = self.end - self.start;
            if pending > self.max_line {
                // Too long already: keep the head once, drop the rest until the newline.
                let entry = skipping.get_or_insert_with(|| {
                    (
                        0,
                        self.buf[self.start..self.start + HEAD_KEPT.min(pending)].to_vec(),
                    )
                });
                entry.0 += pending as u64;
                self.clear();
                scanned = 0;
            }
            if self.eof {
                let rest = &self.buf[self.start..self.end];
                if let Some((dropped, head)) = skipping.take() {
                    let len = dropped + rest.len() as u64;
                    self.clear();
                    return Ok(Some(Inbound::Oversized { len, head }));
                }
                let line = clean(rest).map(<[u8]>::to_vec);
                self.clear();
                return Ok(line.map(Inbound::Line));
            }
            if self.start == self.end {
                self.clear();
                scanned = 0;
            }
            self.fill()?;
        }
    }

    /// Whether [`LineReader::next_frame`] can make progress without waiting for input: a whole
    /// line or the end of input is buffered, or the buffered part of a line is already over the
    /// cap (the rest is then read and dropped up to the newline).
    pub(crate) fn ready(&mut self) -> bool {
        let from = self.searched.clamp(self.start, self.end);
        if let Some(at) = memchr(b'\n', &self.buf[from..self.end]) {
            self.searched = from + at;
            return true;
        }
        // Only what arrives next is searched next time (a long line costs one pass, not one
        // pass per read).
        self.searched = self.end;
        self.eof || self.end - self.start > self.max_line
    }

    /// Whether any bytes of a next line are buffered.
    #[cfg(unix)]
    pub(crate) fn has_pending(&self) -> bool {
        self.start < self.end
    }

    /// The input being framed.
    #[cfg(unix)]
    pub(crate) fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Reads once (whatever is available) into the buffer.
    #[cfg(unix)]
    pub(crate) fn fill_once(&mut self) -> io::Result<()> {
        if self.start == self.end {
            self.clear();
        }
        self.fill()
    }

    fn compact(&mut self) {
        if self.start == self.end {
            self.clear();
        } else if self.start > 32 * 1024 && self.start * 2 > self.end {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.searched = self.searched.saturating_sub(self.start);
            self.start = 0;
        }
    }

    fn fill(&mut self) -> io::Result<()> {
        let want = 64 * 1024;
        if self.buf.len() < self.end + want {
            self.buf.resize(self.end + want, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..self.end + want]) {
                Ok(n) => {
                    self.end += n;
                    if n == 0 {
                        self.eof = true;
                    }
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Forgets the buffered input (the buffer's room is kept).
    fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
        self.searched = 0;
    }
}

/// Strips `\r`, a BOM and surrounding blanks; `None` for a blank line.
fn clean(mut line: &[u8]) -> Option<&[u8]> {
    if let Some(rest) = line.strip_prefix(BOM) {
        line = rest;
    }
    while let [rest @ .., last] = line {
        if last.is_ascii_whitespace() {
            line = rest;
        } else {
            break;
        }
    }
    while let [first, rest @ ..] = line {
        if first.is_ascii_whitespace() {
            line = rest;
        } else {
            break;
        }
    }
    (!line.is_empty()).then_some(line)
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8], max: usize) -> Vec<Inbound> {
        let mut r = LineReader::new(input, max);
        let mut out = Vec::new();
        while let Some(f) = r.next_frame().unwrap() {
            out.push(f);
        }
        out
    }

    fn line(s: &str) -> Inbound {
        Inbound::Line(s.as_bytes().to_vec())
    }

    #[test]
    fn strips_cr_bom_and_blank_lines() {
        let got = frames(b"\xEF\xBB\xBF{\"a\":1}\r\n\r\n\n  \n{\"b\":2}", 100);
        assert_eq!(got, vec![line("{\"a\":1}"), line("{\"b\":2}")]);
    }

    /// Reads that end right after a blank line must not lose or merge the next lines.
    struct Chunks(Vec<&'static [u8]>);

    impl Read for Chunks {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let chunk = self.0.remove(0);
            out[..chunk.len()].copy_from_slice(chunk);
            Ok(chunk.len())
        }
    }

    #[test]
    fn a_read_ending_in_a_blank_line_keeps_the_next_lines_apart() {
        let mut r = LineReader::new(
            Chunks(vec![b"{\"a\":1}\n\n", b"{\"b\":2}\n{\"c\":3}\n"]),
            100,
        );
        let mut got = Vec::new();
        while let Some(f) = r.next_frame().unwrap() {
            got.push(f);
        }
        assert_eq!(
            got,
            vec![line("{\"a\":1}"), line("{\"b\":2}"), line("{\"c\":3}")]
        );
    }

    #[test]
    fn oversized_line_is_reported_and_next_line_survives() {
        let mut input = b"{\"id\":7,\"x\":\"".to_vec();
        input.extend(std::iter::repeat_n(b'a', 300_000));
        input.extend(b"\"}\n{\"ok\":true}\n");
        let got = frames(&input, 1000);
        assert_eq!(got.len(), 2);
        match &got[0] {
            Inbound::Oversized { len, head } => {
                assert_eq!(*len, 300_015);
                assert!(head.starts_with(b"{\"id\":7"));
            }
            other => panic!("expected oversized, got {other:?}"),
        }
        assert_eq!(got[1], line("{\"ok\":true}"));
    }
}
