//! JSON syntax without building values, for lines the parser refused: is the line well-formed
//! JSON (RFC 8259) all the same, and where are its lone surrogate escapes?
//!
//! `serde_json` refuses some well-formed JSON: nesting deeper than its recursion limit, numbers
//! beyond a float's range, and `\ud800`-style escapes of lone UTF-16 surrogates (which
//! JavaScript's `JSON.stringify` writes for a string cut in the middle of an emoji). Such a line
//! is still a request whose id can be read and must be answered; a line that is not JSON at all
//! has no id anyone can trust. This scanner tells the two apart in one pass with an explicit
//! stack (no recursion, so no depth can overflow it).

/// What [`scan`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// Not one JSON value (or not UTF-8).
    Malformed,
    /// One well-formed JSON value; the offsets of the `\uXXXX` escapes of lone surrogates (each
    /// six bytes long) in document order.
    WellFormed { lone_surrogates: Vec<usize> },
}

/// What the scanner expects next.
#[derive(Clone, Copy)]
enum Expect {
    /// A value (the document, an array member after a comma, an object member after a colon).
    Value,
    /// A value or `]` (just after `[`).
    ValueOrClose,
    /// A key or `}` (just after `{`).
    KeyOrClose,
    /// A key (after a comma in an object).
    Key,
    /// `:` after a key.
    Colon,
    /// `,` or the container's closing bracket, after a member.
    CommaOrClose,
}

/// Scans `bytes` as one JSON document (whitespace around it allowed).
pub(crate) fn scan(bytes: &[u8]) -> Syntax {
    if std::str::from_utf8(bytes).is_err() {
        return Syntax::Malformed;
    }
    let mut lone_surrogates = Vec::new();
    let mut stack: Vec<u8> = Vec::new();
    let mut expect = Expect::Value;
    let mut i = 0;
    loop {
        i = skip_whitespace(bytes, i);
        let Some(&byte) = bytes.get(i) else {
            return Syntax::Malformed; // the document ended early
        };
        let mut value_ended = false;
        match (expect, byte) {
            (Expect::ValueOrClose, b']') | (Expect::KeyOrClose, b'}') => {
                stack.pop();
                i += 1;
                value_ended = true;
            }
            (Expect::CommaOrClose, b',') => {
                expect = if stack.last() == Some(&b'{') {
                    Expect::Key
                } else {
                    Expect::Value
                };
                i += 1;
            }
            (Expect::CommaOrClose, b']' | b'}') => {
                let open = if byte == b']' { b'[' } else { b'{' };
                if stack.pop() != Some(open) {
                    return Syntax::Malformed;
                }
                i += 1;
                value_ended = true;
            }
            (Expect::KeyOrClose | Expect::Key, b'"') => {
                let Some(end) = string(bytes, i, &mut lone_surrogates) else {
                    return Syntax::Malformed;
                };
                i = end;
                expect = Expect::Colon;
            }
            (Expect::Colon, b':') => {
                i += 1;
                expect = Expect::Value;
            }
            (Expect::Value | Expect::ValueOrClose, b'{' | b'[') => {
                stack.push(byte);
                i += 1;
                expect = if byte == b'{' {
                    Expect::KeyOrClose
                } else {
                    Expect::ValueOrClose
                };
            }
            (Expect::Value | Expect::ValueOrClose, _) => {
                let end = match byte {
                    b'"' => string(bytes, i, &mut lone_surrogates),
                    b't' => literal(bytes, i, b"true"),
                    b'f' => literal(bytes, i, b"false"),
                    b'n' => literal(bytes, i, b"null"),
                    _ => number(bytes, i),
                };
                let Some(end) = end else {
                    return Syntax::Malformed;
                };
                i = end;
                value_ended = true;
            }
            _ => return Syntax::Malformed,
        }
        if value_ended {
            if stack.is_empty() {
                return if skip_whitespace(bytes, i) == bytes.len() {
                    Syntax::WellFormed { lone_surrogates }
                } else {
                    Syntax::Malformed
                };
            }
            expect = Expect::CommaOrClose;
        }
    }
}

/// Rewrites each lone surrogate escape [`scan`] found to `\ufffd` (also six bytes), the
/// replacement character, so the parser takes the line.
pub(crate) fn replace_lone_surrogates(bytes: &mut [u8], at: &[usize]) {
    for &start in at {
        bytes[start..start + 6].copy_from_slice(b"\\ufffd");
    }
}

fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

fn literal(bytes: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    bytes[i..].starts_with(word).then_some(i + word.len())
}

/// The end of the number starting at `i`: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn number(bytes: &[u8], mut i: usize) -> Option<usize> {
    let digits = |from: usize| {
        let mut j = from;
        while bytes.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        (j > from).then_some(j)
    };
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    i = match bytes.get(i) {
        Some(b'0') => i + 1,
        Some(b'1'..=b'9') => digits(i)?,
        _ => return None,
    };
    if bytes.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Some(i)
}

/// The end of the string whose opening quote is at `start`, noting lone surrogate escapes.
fn string(bytes: &[u8], start: usize, lone: &mut Vec<usize>) -> Option<usize> {
    let mut i = start + 1;
    loop {
        match *bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match *bytes.get(i + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' => {
                    let unit = hex4(bytes, i + 2)?;
                    let pairs = (0xD800..0xDC00).contains(&unit)
                        && bytes.get(i + 6..i + 8) == Some(b"\\u")
                        && hex4(bytes, i + 8).is_some_and(|low| (0xDC00..0xE000).contains(&low));
                    if pairs {
                        i += 12;
                    } else {
                        if (0xD800..0xE000).contains(&unit) {
                            lone.push(i);
                        }
                        i += 6;
                    }
                }
                _ => return None,
            },
            0x00..=0x1F => return None, // control characters must be escaped
            _ => i += 1,
        }
    }
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::{Syntax, replace_lone_surrogates, scan};

    fn well_formed(text: &str) -> bool {
        matches!(scan(text.as_bytes()), Syntax::WellFormed { .. })
    }

    #[test]
    fn every_kind_of_value_is_well_formed() {
        for text in [
            r#"{"a":[1,-2.5e+3,0,true,false,null,"x\n\u00e9\"",{}],"b":{"c":[]}}"#,
            " [ ] ",
            "0",
            r#""\ud83d\ude00""#,
        ] {
            assert!(well_formed(text), "{text}");
        }
    }

    #[test]
    fn broken_or_truncated_documents_are_malformed() {
        for text in [
            "",
            "{",
            r#"{"id":2,"x":1e999999"#,
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "-",
            "[1]]",
            "{]",
            r#""\x""#,
            "\"a\u{1}\"",
            r#"{"a":1}{"#,
            "tru",
            r#""\u12g4""#,
        ] {
            assert_eq!(scan(text.as_bytes()), Syntax::Malformed, "{text:?}");
        }
        assert_eq!(scan(b"\"\xff\""), Syntax::Malformed);
    }

    #[test]
    fn nesting_far_beyond_the_parsers_limit_is_scanned_without_recursion() {
        let depth = 1_000_000;
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(well_formed(&deep));
        assert_eq!(scan(&deep.as_bytes()[1..]), Syntax::Malformed);
    }

    #[test]
    fn lone_surrogates_are_found_and_replaced_in_place() {
        let mut line = br#"{"x":"\ud800","y":"\udc00\ud83d\ude00"}"#.to_vec();
        let Syntax::WellFormed { lone_surrogates } = scan(&line) else {
            panic!("malformed");
        };
        assert_eq!(lone_surrogates, vec![6, 19]);
        replace_lone_surrogates(&mut line, &lone_surrogates);
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["x"], "\u{fffd}");
        assert_eq!(value["y"], "\u{fffd}\u{1f600}");
    }
}
