//! `Captured::copy_labelled` prefixes every line with the label, ends with a newline, and streams
//! any size in bounded memory.

use crate::support::{capture_of, err, is_child, run_passing_child};
use mcpline_core::Captured;

const LABELS: &str = "copy_labelled::copy_labelled_prefixes_every_line";

#[test]
fn copy_labelled_prefixes_every_line() {
    if is_child(LABELS) {
        return labels_child();
    }
    let (_, stderr) = run_passing_child(LABELS, b"");
    assert!(stderr.contains("LABELS-DONE"), "{stderr}");
}

fn labelled(captured: &Captured, label: &str) -> Vec<u8> {
    let mut out = Vec::new();
    captured
        .copy_labelled(label, &mut out)
        .expect("copy_labelled");
    out
}

/// The expected output, computed in memory.
fn reference(bytes: &[u8], label: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for line in bytes.split_inclusive(|&byte| byte == b'\n') {
        out.extend_from_slice(label.as_bytes());
        out.extend_from_slice(line);
    }
    if out.last().is_some_and(|&byte| byte != b'\n') {
        out.push(b'\n');
    }
    out
}

fn labels_child() {
    let unterminated = capture_of(b"alpha\nbeta\n\ngamma");
    let terminated = capture_of(b"one\ntwo\n");
    let empty = capture_of(b"");
    // Lines of many lengths, so that lines and labels straddle the 64 KiB read chunks.
    let mut long = Vec::new();
    let mut seed = 7_u32;
    while long.len() < 300 * 1024 {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let width = (seed >> 8) as usize % 9000;
        long.extend(std::iter::repeat_n(b'a' + (seed % 26) as u8, width));
        long.push(b'\n');
    }
    long.extend_from_slice("trailing é without newline".as_bytes());
    let chunked = capture_of(&long);
    err("LABELS-DONE\n");

    assert_eq!(
        String::from_utf8(labelled(&unterminated, "[count_words #7] ")).expect("utf-8"),
        "[count_words #7] alpha\n[count_words #7] beta\n[count_words #7] \n[count_words #7] gamma\n"
    );
    assert_eq!(labelled(&terminated, "[t] "), b"[t] one\n[t] two\n");
    assert_eq!(labelled(&empty, "[t] "), b"");
    assert!(labelled(&chunked, "[long #1] ") == reference(&long, "[long #1] "));
}

#[cfg(unix)]
#[test]
fn copy_labelled_streams_a_200_mib_child_flood_in_bounded_memory() {
    if is_child(flood::TEST) {
        return flood::child();
    }
    let (_, stderr) = run_passing_child(flood::TEST, b"");
    assert!(stderr.contains("FLOOD-DONE"), "{stderr}");
}

#[cfg(unix)]
mod flood {
    use std::io::{self, Write};

    use mcpline_core::Capture;

    use crate::support::err;

    pub(crate) const TEST: &str =
        "copy_labelled::copy_labelled_streams_a_200_mib_child_flood_in_bounded_memory";
    const BYTES: u64 = 200 * 1024 * 1024;
    const LINE: u64 = 100; // 99 'x' and a newline
    const LABEL: &str = "[flood #1] ";

    /// Checks the labelled stream as it passes, keeping only counters.
    struct Checker {
        /// Position inside the label expected next, `None` inside a line's own bytes.
        in_label: Option<usize>,
        bytes: u64,
        lines: u64,
    }

    impl Write for Checker {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let label = LABEL.as_bytes();
            for &byte in buf {
                match self.in_label {
                    Some(at) => {
                        assert_eq!(byte, label[at], "line {} lacks the label", self.lines);
                        self.in_label = (at + 1 < label.len()).then_some(at + 1);
                    }
                    None if byte == b'\n' => {
                        self.lines += 1;
                        self.in_label = Some(0);
                    }
                    None => assert_eq!(byte, b'x', "unexpected byte"),
                }
            }
            self.bytes += buf.len() as u64;
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    pub(crate) fn child() {
        let script = format!("yes {} | head -c {BYTES}", "x".repeat(99));
        // Not capped: this case is about streaming a large capture, not about the cap.
        mcpline_core::set_capture_cap(u64::MAX);
        let capture = Capture::begin().expect("begin");
        let status = std::process::Command::new("sh")
            .args(["-c", &script])
            .status();
        let captured = capture.finish().expect("finish");
        assert!(status.expect("run the flood").success());
        assert_eq!(captured.len(), BYTES);

        let mut checker = Checker {
            in_label: Some(0),
            bytes: 0,
            lines: 0,
        };
        captured
            .copy_labelled(LABEL, &mut checker)
            .expect("copy_labelled");
        let cut = u64::from(BYTES % LINE != 0); // a cut last line gets a newline added
        let lines = BYTES / LINE + cut;
        assert_eq!(checker.lines, lines);
        assert_eq!(checker.bytes, BYTES + cut + lines * LABEL.len() as u64);
        assert!(
            captured
                .tail_text(40)
                .ends_with(&format!("{}\n", "x".repeat(39)))
        );

        #[cfg(target_os = "linux")]
        {
            let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
            let peak_kib: u64 = status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
                .expect("VmHWM in /proc/self/status");
            assert!(peak_kib < 100 * 1024, "peak resident memory {peak_kib} KiB");
        }
        err("FLOOD-DONE\n");
    }
}
