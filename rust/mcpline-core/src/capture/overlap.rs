//! Calls that share one capture: who wrote which bytes of the capture file.
//!
//! Descriptors are process-wide, so calls that run at the same time (async tools) share the
//! capture file fds 1 and 2 point at. The file is append-only and its size only grows, so an
//! offset is a moment: the cell notes the size whenever a call joins or leaves ([`Mark`]) and
//! whenever a write is known to be one call's own ([`Tag`]: a Python-level write by that call's
//! task, which the binding routes through [`super::write_attributed`]).
//!
//! When a call leaves, its bytes are the range it was present for, read as:
//!
//! - tagged as its own write → its own;
//! - tagged as another call's write → not its business (left out);
//! - untagged, while it ran alone → its own;
//! - untagged, while others ran too (a child process, C code, an untagged thread) → shared:
//!   attached with a marker naming the other calls, and copied to the log once, labelled with
//!   every call that was running, by the last of them to leave.
//!
//! Nothing is guessed: a byte is only called one call's own when no other call could have
//! written it.

use std::sync::Arc;

use super::captured::{Piece, Shared};

/// A call taking part in a shared capture.
#[derive(Debug)]
struct Member {
    id: u64,
    /// `"name #id"`, for the labels of shared lines.
    label: Arc<str>,
    /// The file size when it joined.
    start: u64,
    /// The file size when it left; `None` while it runs.
    end: Option<u64>,
}

/// From `at` on (until the next mark), these members were running.
#[derive(Debug)]
struct Mark {
    at: u64,
    running: Vec<u64>,
}

/// Bytes `start..end` were written by `member`'s own code.
#[derive(Debug, Clone, Copy)]
struct Tag {
    start: u64,
    end: u64,
    member: u64,
}

/// The bookkeeping of one shared capture, from the moment a second call joined until the last
/// one leaves.
#[derive(Debug)]
pub(super) struct Overlap {
    members: Vec<Member>,
    marks: Vec<Mark>,
    tags: Vec<Tag>,
}

impl Overlap {
    /// The capture of `first` (id, label, and the offset it began at) is joined by `second` at
    /// offset `at`.
    pub(super) fn new(first: (u64, Arc<str>, u64), second: (u64, Arc<str>), at: u64) -> Self {
        let mut overlap = Self {
            members: vec![Member {
                id: first.0,
                label: first.1,
                start: first.2,
                end: None,
            }],
            marks: vec![Mark {
                at: first.2,
                running: vec![first.0],
            }],
            tags: Vec::new(),
        };
        overlap.join(second.0, second.1, at);
        overlap
    }

    /// Another call joins at offset `at`.
    pub(super) fn join(&mut self, id: u64, label: Arc<str>, at: u64) {
        self.members.push(Member {
            id,
            label,
            start: at,
            end: None,
        });
        self.mark(at);
    }

    /// How many members are still running.
    pub(super) fn running(&self) -> usize {
        self.members.iter().filter(|m| m.end.is_none()).count()
    }

    /// The labels of the running members, in the order they joined.
    pub(super) fn running_labels(&self) -> Vec<&str> {
        self.members
            .iter()
            .filter(|m| m.end.is_none())
            .map(|m| &*m.label)
            .collect()
    }

    /// Whether `id` is a running member.
    pub(super) fn is_running(&self, id: u64) -> bool {
        self.members.iter().any(|m| m.id == id && m.end.is_none())
    }

    /// Bytes `start..end` are `id`'s own write (ignored unless `id` is running).
    pub(super) fn tag(&mut self, id: u64, start: u64, end: u64) {
        if end > start && self.is_running(id) {
            self.tags.push(Tag {
                start,
                end,
                member: id,
            });
        }
    }

    /// `id` leaves at offset `at`: the pieces of the file that are its business (see the module
    /// docs), in file order. Unknown ids get nothing.
    pub(super) fn leave(&mut self, id: u64, at: u64) -> Vec<Piece> {
        let Some(index) = self
            .members
            .iter()
            .position(|m| m.id == id && m.end.is_none())
        else {
            return Vec::new();
        };
        self.members[index].end = Some(at);
        let start = self.members[index].start;
        let pieces = self.pieces_of(id, start, at);
        self.mark(at);
        self.prune();
        pieces
    }

    /// A mark at `at` with the members running now (never before the last mark: the file only
    /// grows, unless something truncated it, and then the bytes before count as earlier).
    fn mark(&mut self, at: u64) {
        let at = self.marks.last().map_or(at, |last| at.max(last.at));
        let running = self
            .members
            .iter()
            .filter(|m| m.end.is_none())
            .map(|m| m.id)
            .collect();
        self.marks.push(Mark { at, running });
    }

    /// The segments of `start..end` with the members running over each.
    fn segments(&self, start: u64, end: u64) -> Vec<(u64, u64, &[u64])> {
        let mut out = Vec::new();
        for (i, mark) in self.marks.iter().enumerate() {
            let next = self.marks.get(i + 1).map_or(u64::MAX, |m| m.at);
            let (a, b) = (mark.at.max(start), next.min(end));
            if a < b {
                out.push((a, b, mark.running.as_slice()));
            }
        }
        out
    }

    /// The label `id` joined with.
    pub(super) fn label_of(&self, id: u64) -> Option<&Arc<str>> {
        self.members.iter().find(|m| m.id == id).map(|m| &m.label)
    }

    fn pieces_of(&self, id: u64, start: u64, end: u64) -> Vec<Piece> {
        let mut pieces: Vec<Piece> = Vec::new();
        for (a, b, running) in self.segments(start, end) {
            let others: Vec<u64> = running.iter().copied().filter(|&m| m != id).collect();
            let shared = (!others.is_empty()).then(|| self.shared(id, &others));
            let mut tags: Vec<Tag> = self
                .tags
                .iter()
                .filter(|t| t.end > a && t.start < b)
                .copied()
                .collect();
            tags.sort_by_key(|t| t.start);
            let mut at = a;
            for tag in tags {
                let (ts, te) = (tag.start.max(a), tag.end.min(b));
                if ts > at {
                    push(&mut pieces, at, ts, shared.clone());
                }
                if tag.member == id {
                    push(&mut pieces, ts.max(at), te, None);
                }
                at = at.max(te);
            }
            if at < b {
                push(&mut pieces, at, b, shared);
            }
        }
        pieces
    }

    /// How untagged bytes that `id` shared with `others` are shown and logged.
    fn shared(&self, id: u64, others: &[u64]) -> Shared {
        let names: Vec<&str> = others
            .iter()
            .filter_map(|&m| self.label_of(m).map(|l| &**l))
            .collect();
        // The last of them to leave copies the lines to the log, labelled with all of them.
        let last = others
            .iter()
            .all(|&m| !self.members.iter().any(|x| x.id == m && x.end.is_none()));
        let log = last.then(|| {
            // In the order the calls joined.
            let all: Vec<&str> = self
                .members
                .iter()
                .filter(|m| m.id == id || others.contains(&m.id))
                .map(|m| &*m.label)
                .collect();
            Arc::from(format!("[{}] ", all.join(" + ")))
        });
        Shared {
            with: Arc::from(names.join(", ")),
            log,
        }
    }

    /// Forgets what no running member can need any more: members that left, marks and tags
    /// that end before the earliest running member's start.
    fn prune(&mut self) {
        let Some(floor) = self
            .members
            .iter()
            .filter(|m| m.end.is_none())
            .map(|m| m.start)
            .min()
        else {
            return;
        };
        self.tags.retain(|t| t.end > floor);
        let keep_from = self.marks.iter().rposition(|m| m.at <= floor).unwrap_or(0);
        self.marks.drain(..keep_from);
        let marks = &self.marks;
        self.members.retain(|m| {
            m.end.is_none_or(|end| end > floor) || marks.iter().any(|k| k.running.contains(&m.id))
        });
    }
}

/// Appends a piece, merging it into the previous one when they touch and read alike.
fn push(pieces: &mut Vec<Piece>, start: u64, end: u64, shared: Option<Shared>) {
    if start >= end {
        return;
    }
    if let Some(last) = pieces.last_mut() {
        if last.end == start && last.shared == shared {
            last.end = end;
            return;
        }
    }
    pieces.push(Piece { start, end, shared });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    fn own(start: u64, end: u64) -> Piece {
        Piece {
            start,
            end,
            shared: None,
        }
    }

    #[test]
    fn bytes_written_while_a_call_ran_alone_are_its_own() {
        // a runs alone for 0..10, b joins at 10, a leaves at 20, b alone until 30.
        let mut o = Overlap::new((1, label("a #1"), 0), (2, label("b #2")), 10);
        let a = o.leave(1, 20);
        assert_eq!(a[0], own(0, 10));
        assert_eq!((a[1].start, a[1].end), (10, 20));
        let shared = a[1].shared.as_ref().expect("10..20 is shared");
        assert_eq!(&*shared.with, "b #2");
        assert!(
            shared.log.is_none(),
            "b still runs: b logs the shared lines"
        );
        let b = o.leave(2, 30);
        assert_eq!(b.len(), 2);
        let shared = b[0].shared.as_ref().expect("10..20 is shared");
        assert_eq!(&*shared.with, "a #1");
        assert_eq!(shared.log.as_deref(), Some("[a #1 + b #2] "));
        assert_eq!(b[1], own(20, 30));
    }

    #[test]
    fn tagged_writes_belong_to_their_writer_only() {
        let mut o = Overlap::new((1, label("a #1"), 0), (2, label("b #2")), 0);
        o.tag(1, 0, 5);
        o.tag(2, 5, 9);
        // 9..12: a child's bytes, untagged.
        let a = o.leave(1, 12);
        assert_eq!(a[0], own(0, 5));
        assert_eq!((a[1].start, a[1].end), (9, 12));
        assert!(a[1].shared.is_some());
        let b = o.leave(2, 12);
        assert_eq!(b[0], own(5, 9));
        assert_eq!((b[1].start, b[1].end), (9, 12));
        assert!(b[1].shared.as_ref().is_some_and(|s| s.log.is_some()));
    }

    #[test]
    fn a_tag_of_a_call_that_left_counts_for_nothing() {
        let mut o = Overlap::new((1, label("a #1"), 0), (2, label("b #2")), 0);
        let _ = o.leave(1, 0);
        o.tag(1, 0, 4);
        assert_eq!(o.leave(2, 4), vec![own(0, 4)]);
    }

    #[test]
    fn leaving_twice_or_unknown_gives_nothing() {
        let mut o = Overlap::new((1, label("a #1"), 0), (2, label("b #2")), 0);
        assert_eq!(o.running(), 2);
        assert!(!o.leave(1, 3).is_empty());
        assert!(o.leave(1, 3).is_empty());
        assert!(o.leave(9, 3).is_empty());
        assert_eq!(o.running(), 1);
    }

    #[test]
    fn bookkeeping_stays_small_while_calls_keep_overlapping() {
        let mut o = Overlap::new((1, label("a #1"), 0), (2, label("b #2")), 0);
        let mut at = 0;
        for id in 3..1000 {
            at += 10;
            o.join(id, label("c"), at);
            o.tag(id, at, at + 1);
            let _ = o.leave(id - 2, at + 5);
        }
        assert!(o.members.len() < 8, "{} members kept", o.members.len());
        assert!(o.marks.len() < 16, "{} marks kept", o.marks.len());
        assert!(o.tags.len() < 8, "{} tags kept", o.tags.len());
    }
}
