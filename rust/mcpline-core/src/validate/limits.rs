//! The limits that keep messages short and the schema walks bounded.

/// At most this many lines in one error message (the last one may say how many were left out).
pub(super) const MAX_LINES: usize = 10;
/// Stop counting further problems after this many (the count is only for the summary line).
pub(super) const MAX_COUNTED_PROBLEMS: usize = 1000;
/// Longest line kept in an error message, in characters.
pub(super) const MAX_LINE_CHARS: usize = 400;
/// Longest rendering of an offending value, in characters.
pub(super) const MAX_VALUE_CHARS: usize = 60;
/// How many names "Valid arguments: ..." lists before summarising the rest.
pub(super) const MAX_LISTED_NAMES: usize = 30;
/// How many unknown keys one message names before summarising the rest.
pub(super) const MAX_LISTED_UNKNOWN: usize = 10;
/// Keys longer than this are not compared against the valid names (edit distance is quadratic).
pub(super) const MAX_SUGGESTION_KEY_CHARS: usize = 128;
/// Minimum normalised Damerau–Levenshtein similarity for a "did you mean" suggestion.
pub(super) const MIN_SIMILARITY: f64 = 0.6;
/// How deep in-place applicators (`allOf`, `$ref`, ...) are followed to collect argument names.
pub(super) const MAX_NAME_DEPTH: usize = 32;
