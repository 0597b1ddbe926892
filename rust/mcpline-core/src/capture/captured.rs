//! What a finished capture hands back: [`Captured`], read from its file on demand.

use std::fs::File;
use std::io::{self, BufWriter, Write};

/// Chunk size for streaming a capture (reads and the buffered writer).
const CHUNK: usize = 64 * 1024;

/// The bytes of one finished capture (or of a [`Window`](super::Window) onto one). They live in
/// the (unlinked) capture file, which is closed when this value is dropped.
#[derive(Debug)]
pub struct Captured {
    /// `None` for an empty capture (its file went back to be reused).
    pub(super) file: Option<File>,
    /// Where these bytes begin in the file: 0, except for a window.
    pub(super) start: u64,
    /// Where they end: the size of the file when the capture finished; later writes by
    /// lingering children are ignored.
    pub(super) end: u64,
}

impl Captured {
    /// Nothing captured.
    pub(super) const EMPTY: Self = Self {
        file: None,
        start: 0,
        end: 0,
    };

    /// Total bytes captured.
    #[must_use]
    pub const fn len(&self) -> u64 {
        self.end - self.start
    }

    /// Whether nothing was captured.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.end == self.start
    }

    /// The last `limit` bytes as text (lossy UTF-8), prefixed by
    /// `"[… N earlier bytes not shown …]\n"` when earlier bytes were left out.
    ///
    /// The cut never splits a character: continuation bytes at the cut are left out too (and
    /// counted in `N`), so the text after the marker holds at most `limit` captured bytes. Only
    /// the tail is read from the file. A read error is reported inside the text.
    #[must_use]
    pub fn tail_text(&self, limit: usize) -> String {
        let Some(file) = &self.file else {
            return String::new();
        };
        let start = self
            .end
            .saturating_sub(u64::try_from(limit).unwrap_or(u64::MAX))
            .max(self.start);
        let Ok(want) = usize::try_from(self.end - start) else {
            return String::new(); // unreachable: at most `limit`
        };
        let mut buf = vec![0; want];
        if let Err(error) = read_exact_at(file, &mut buf, start) {
            return format!("[… capture file unreadable: {error} …]\n");
        }
        let skip = if start > self.start {
            buf.iter()
                .take(3)
                .take_while(|&&byte| is_utf8_continuation(byte))
                .count()
        } else {
            0
        };
        let hidden = start - self.start + skip as u64;
        let body = String::from_utf8_lossy(&buf[skip..]);
        if hidden == 0 {
            body.into_owned()
        } else {
            format!("[… {hidden} earlier bytes not shown …]\n{body}")
        }
    }

    /// Streams the whole capture to `out` in bounded chunks, each line prefixed with `label`
    /// (e.g. `"[count_words #7] "`), ending with a newline if the capture did not. Bytes are
    /// copied as they are (no UTF-8 decoding). Memory stays bounded (two 64 KiB buffers)
    /// whatever the size. An empty capture writes nothing.
    ///
    /// # Errors
    ///
    /// Reading the capture file or writing to `out` failed.
    pub fn copy_labelled(&self, label: &str, out: &mut dyn Write) -> io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut out = BufWriter::with_capacity(CHUNK, out);
        let mut buf = vec![0; CHUNK];
        let mut offset = self.start;
        let mut at_line_start = true;
        while offset < self.end {
            let want = usize::try_from(self.end - offset).map_or(CHUNK, |left| left.min(CHUNK));
            let read = read_at(file, &mut buf[..want], offset)?;
            if read == 0 {
                break; // the file shrank: nothing more to copy
            }
            offset += read as u64;
            let mut rest = &buf[..read];
            while !rest.is_empty() {
                if at_line_start {
                    out.write_all(label.as_bytes())?;
                }
                if let Some(end) = rest.iter().position(|&byte| byte == b'\n') {
                    out.write_all(&rest[..=end])?;
                    rest = &rest[end + 1..];
                    at_line_start = true;
                } else {
                    out.write_all(rest)?;
                    rest = &[];
                    at_line_start = false;
                }
            }
        }
        if !at_line_start {
            out.write_all(b"\n")?;
        }
        out.flush()
    }

    /// Reads the whole capture into memory (size it with [`Captured::len`] first).
    ///
    /// # Errors
    ///
    /// Reading the capture file failed.
    pub fn read_all(&self) -> io::Result<Vec<u8>> {
        let Some(file) = &self.file else {
            return Ok(Vec::new());
        };
        let len = usize::try_from(self.len())
            .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "capture too large"))?;
        let mut buf = vec![0; len];
        read_exact_at(file, &mut buf, self.start)?;
        Ok(buf)
    }
}

const fn is_utf8_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// Positional read that does not move the shared file offset on unix (fds 1 and 2 share it).
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

/// Positional read. On Windows this moves the file pointer, which only matters to a child that
/// outlived its capture and still writes to it.
#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(read) => {
                buf = &mut buf[read..];
                offset += read as u64;
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
