//! The fuzz corpus (`fuzz/corpus/stdio`, seeds and inputs the fuzzer found) replayed as
//! regression tests: each file is one whole input stream through the real framing, held to the
//! invariants the fuzz target checks ([`crate::invariants`]).

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use crate::invariants::{LINE_CAP, check_answers};
use crate::support::Harness;

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/stdio");
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read the fuzz corpus {}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("a corpus entry").path();
            let name = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let bytes = fs::read(&path).unwrap_or_else(|e| panic!("cannot read {name}: {e}"));
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

/// The server's answers to `input`, sent in one piece and then closed.
fn serve(input: &[u8]) -> Vec<serde_json::Value> {
    let mut h = Harness::start_stream(LINE_CAP);
    h.send_bytes(input.to_vec());
    h.close();
    h.wait_end(Duration::from_secs(30));
    // Everything is written by the time the serve returns.
    h.collect_until_silence(Duration::from_millis(20))
}

#[test]
fn every_corpus_input_is_answered_exactly_once_in_valid_json_lines() {
    let files = corpus();
    assert!(
        files.len() >= 20,
        "the fuzz corpus is missing or nearly empty"
    );
    let failures: Vec<String> = files
        .iter()
        .filter_map(|(name, input)| {
            check_answers(input, LINE_CAP, &serve(input))
                .err()
                .map(|violation| format!("{name}: {violation}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
