//! What a finished capture hands back: [`Captured`], read from its file on demand.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::sync::Arc;

/// Chunk size for streaming a capture (reads and the buffered writer).
const CHUNK: usize = 64 * 1024;

/// The bytes of one finished capture (or of a [`Window`](super::Window) onto one). They live in
/// the (unlinked) capture file, which is closed when the last value reading it is dropped.
///
/// A capture that calls running at the same time shared (see [`super::overlap`]) is a list of
/// pieces of the file: the call's own bytes, and bytes it shared with other calls, which are
/// attached with a marker naming them.
#[derive(Debug)]
pub struct Captured {
    /// `None` for an empty capture (its file went back to be reused).
    pub(super) file: Option<Arc<File>>,
    /// The ranges of the file that are this capture's, in file order. Bytes that lingering
    /// children write after the capture ended are in no piece.
    pub(super) pieces: Vec<Piece>,
    /// Earlier bytes of this capture that already went to the log while it ran (it passed the
    /// capture cap); they are in no piece.
    pub(super) skipped: u64,
}

/// Bytes `start..end` of a capture file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Piece {
    pub(super) start: u64,
    pub(super) end: u64,
    /// `None`: the capture's own bytes. Otherwise written while other calls ran too.
    pub(super) shared: Option<Shared>,
}

/// Bytes no single call can claim: written while several calls ran (by a child process, C code
/// or a thread none of them owns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Shared {
    /// The other calls, `"name #id, name #id"`.
    pub(super) with: Arc<str>,
    /// The log label when this capture is the one to copy these lines to the log (the last of
    /// the calls to end); `None` when another one does.
    pub(super) log: Option<Arc<str>>,
}

impl Captured {
    /// Nothing captured.
    pub(super) const EMPTY: Self = Self {
        file: None,
        pieces: Vec::new(),
        skipped: 0,
    };

    /// Bytes `start..end` of `file`, all the capture's own.
    pub(super) fn whole(file: Arc<File>, start: u64, end: u64) -> Self {
        Self {
            file: Some(file),
            pieces: vec![Piece {
                start,
                end,
                shared: None,
            }],
            skipped: 0,
        }
    }

    /// Leaves out what lies before `drained` (already copied to the log), counting it.
    #[must_use]
    pub(super) fn after(mut self, drained: u64) -> Self {
        for piece in &mut self.pieces {
            if piece.start < drained {
                let cut = drained.min(piece.end);
                self.skipped += cut - piece.start;
                piece.start = cut;
            }
        }
        self.pieces.retain(|p| p.end > p.start);
        self
    }

    /// Total bytes captured.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.skipped + self.pieces.iter().map(|p| p.end - p.start).sum::<u64>()
    }

    /// Whether nothing was captured.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.skipped == 0 && self.pieces.iter().all(|p| p.end == p.start)
    }

    /// The last `limit` bytes as text (lossy UTF-8), prefixed by
    /// `"[… N earlier bytes not shown …]\n"` when earlier bytes were left out. Lines shared with
    /// other calls are prefixed `"[shared with name #id] "`.
    ///
    /// The cut never splits a character: continuation bytes at the cut are left out too (and
    /// counted in `N`), so the text after the marker holds at most `limit` captured bytes. Only
    /// the tail is read from the file. A read error is reported inside the text.
    #[must_use]
    pub fn tail_text(&self, limit: usize) -> String {
        let Some(file) = &self.file else {
            return String::new();
        };
        // The pieces (or their ends) that fit in `limit`, latest first.
        let mut budget = u64::try_from(limit).unwrap_or(u64::MAX);
        let mut shown: Vec<(u64, &Piece)> = Vec::new();
        for piece in self.pieces.iter().rev() {
            if budget == 0 {
                break;
            }
            let from = piece.end.saturating_sub(budget).max(piece.start);
            budget -= piece.end - from;
            shown.push((from, piece));
        }
        shown.reverse();
        let mut hidden = self.len() - shown.iter().map(|(from, p)| p.end - from).sum::<u64>();
        let mut body = String::new();
        let mut at_line_start = true;
        let mut previous: Option<Option<&Shared>> = None;
        for (i, (from, piece)) in shown.iter().enumerate() {
            let Ok(want) = usize::try_from(piece.end - from) else {
                continue; // unreachable: at most `limit`
            };
            let mut buf = vec![0; want];
            if let Err(error) = read_exact_at(file, &mut buf, *from) {
                return format!("[… capture file unreadable: {error} …]\n");
            }
            let skip = if i == 0 && *from > piece.start {
                buf.iter()
                    .take(3)
                    .take_while(|&&byte| is_utf8_continuation(byte))
                    .count()
            } else {
                0
            };
            hidden += skip as u64;
            let shared = piece.shared.as_ref();
            if previous.is_some_and(|p| p != shared) && !at_line_start {
                body.push('\n');
                at_line_start = true;
            }
            previous = Some(shared);
            let text = String::from_utf8_lossy(&buf[skip..]);
            match shared {
                None => body.push_str(&text),
                Some(s) => {
                    let label = format!("[shared with {}] ", s.with);
                    for line in text.split_inclusive('\n') {
                        if at_line_start {
                            body.push_str(&label);
                        }
                        body.push_str(line);
                        at_line_start = line.ends_with('\n');
                    }
                    continue;
                }
            }
            if !text.is_empty() {
                at_line_start = text.ends_with('\n');
            }
        }
        if hidden == 0 {
            body
        } else {
            format!("[… {hidden} earlier bytes not shown …]\n{body}")
        }
    }

    /// Streams the capture to `out` in bounded chunks, each line prefixed with `label` (e.g.
    /// `"[count_words #7] "`), ending with a newline if the capture did not. Lines shared with
    /// other calls carry a label naming all of them, and are written by the last of those calls
    /// to end (so the log has each line once). Bytes are copied as they are (no UTF-8 decoding).
    /// Memory stays bounded (two 64 KiB buffers) whatever the size. An empty capture writes
    /// nothing.
    ///
    /// # Errors
    ///
    /// Reading the capture file or writing to `out` failed.
    pub fn copy_labelled(&self, label: &str, out: &mut dyn Write) -> io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        // Buffers no larger than the capture: a few lines cost no 64 KiB to allocate and zero.
        let size = usize::try_from(self.len()).map_or(CHUNK, |len| len.clamp(1, CHUNK));
        let mut out = BufWriter::with_capacity(size + 256, out);
        let mut buf = vec![0; size];
        let mut at_line_start = true;
        let mut previous: Option<&str> = None;
        for piece in &self.pieces {
            let label = match &piece.shared {
                None => label,
                Some(Shared { log: Some(log), .. }) => log,
                Some(Shared { log: None, .. }) => continue,
            };
            if previous.is_some_and(|p| p != label) && !at_line_start {
                out.write_all(b"\n")?;
                at_line_start = true;
            }
            previous = Some(label);
            let mut offset = piece.start;
            while offset < piece.end {
                let want = usize::try_from(piece.end - offset).map_or(size, |left| left.min(size));
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
        let mut all = vec![0; len];
        let mut at = 0;
        for piece in &self.pieces {
            let n = usize::try_from(piece.end - piece.start).unwrap_or(0);
            read_exact_at(file, &mut all[at..at + n], piece.start)?;
            at += n;
        }
        Ok(all)
    }
}

const fn is_utf8_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// Positional read that does not move the shared file offset on unix (fds 1 and 2 share it).
#[cfg(unix)]
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

/// Positional read. On Windows this moves the file pointer of the cell's own handle, which no
/// writer uses: fds 1 and 2 write through an append-only open of their own.
#[cfg(windows)]
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
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
