//! `tools/call` requests, formatted ahead of time, and the check of their responses.

use std::fmt::Write as _;

use serde_json::Value;

use crate::server::excerpt;

/// What the responses of a run must be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Expect {
    /// Every response is a result that is not `isError`.
    Ok,
    /// Every response is a JSON-RPC error or an `isError` result.
    Error,
    /// Anything goes; errors are only counted.
    Any,
}

/// One tool and its arguments, as the fixed part of every request line.
pub(crate) struct CallTemplate {
    /// `"jsonrpc":"2.0","method":"tools/call","params":{...}}` followed by a newline.
    tail: String,
}

impl CallTemplate {
    pub(crate) fn new(tool: &str, args: &Value) -> Self {
        Self::with_params(&serde_json::json!({ "name": tool, "arguments": args }))
    }

    /// A request with these `params` (a `tools/call`'s name, arguments and any `_meta`).
    pub(crate) fn with_params(params: &Value) -> Self {
        Self {
            tail: format!(",\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{params}}}\n"),
        }
    }

    /// Appends the request with this `id` to `buf`.
    pub(crate) fn append(&self, buf: &mut String, id: u64) {
        let _ = write!(buf, "{{\"id\":{id}");
        buf.push_str(&self.tail);
    }

    /// All requests with ids `first..first + count`, back to back.
    pub(crate) fn batch(&self, first: u64, count: usize) -> String {
        let mut buf = String::with_capacity(count * (self.tail.len() + 16));
        for id in (first..).take(count) {
            self.append(&mut buf, id);
        }
        buf
    }
}

/// Checks that `replies` holds exactly one response per id in `first..first + count`, in any
/// order, each a result or an error as `expect` says. Returns how many were errors.
pub(crate) fn check_replies(
    replies: &[u8],
    first: u64,
    count: usize,
    expect: Expect,
) -> Result<usize, String> {
    let mut seen = vec![false; count];
    let mut errors = 0;
    let mut first_error = None;
    let mut first_result = None;
    let mut lines = 0;
    for line in replies
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
    {
        lines += 1;
        let reply: Value = serde_json::from_slice(line)
            .map_err(|e| format!("a response is not JSON ({e}): {}", excerpt(line)))?;
        let slot = reply
            .get("id")
            .and_then(Value::as_u64)
            .and_then(|id| id.checked_sub(first))
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| seen.get_mut(i))
            .ok_or_else(|| {
                format!(
                    "a line is not a response to a request sent: {}",
                    excerpt(line)
                )
            })?;
        if std::mem::replace(slot, true) {
            return Err(format!("a request was answered twice: {}", excerpt(line)));
        }
        let is_error = match (reply.get("result"), reply.get("error")) {
            (Some(result), None) => result.get("isError") == Some(&Value::Bool(true)),
            (None, Some(_)) => true,
            _ => {
                return Err(format!(
                    "a response has not exactly one of result/error: {}",
                    excerpt(line)
                ));
            }
        };
        if is_error {
            errors += 1;
            first_error.get_or_insert_with(|| excerpt(line));
        } else {
            first_result.get_or_insert_with(|| excerpt(line));
        }
    }
    if lines != count {
        return Err(format!("{lines} responses for {count} requests"));
    }
    match (expect, first_error, first_result) {
        (Expect::Ok, Some(error), _) => Err(format!(
            "{errors} of {count} responses are errors (--expect ok), e.g. {error}"
        )),
        (Expect::Error, _, Some(result)) => Err(format!(
            "{} of {count} responses are not errors (--expect error), e.g. {result}",
            count - errors
        )),
        _ => Ok(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_json_lines_with_their_ids() {
        let call = CallTemplate::new("add", &serde_json::json!({"a": 1, "b": 2}));
        let batch = call.batch(5, 2);
        let lines: Vec<Value> = batch
            .lines()
            .map(|l| serde_json::from_str(l).expect("valid JSON"))
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["id"], 6);
        assert_eq!(lines[0]["method"], "tools/call");
        assert_eq!(lines[0]["params"]["arguments"]["b"], 2);
        assert!(batch.ends_with('\n'));
    }

    #[test]
    fn replies_are_checked_by_id_and_kind() {
        let ok = b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n{\"id\": 1, \"result\": {}}\n";
        assert_eq!(check_replies(ok, 1, 2, Expect::Ok), Ok(0));
        assert!(check_replies(ok, 1, 3, Expect::Ok).is_err(), "one missing");
        assert!(
            check_replies(ok, 2, 2, Expect::Ok).is_err(),
            "id 1 was not sent"
        );
        let twice = b"{\"id\":1,\"result\":{}}\n{\"id\":1,\"result\":{}}\n";
        assert!(check_replies(twice, 1, 2, Expect::Ok).is_err());
        let bad = b"{\"id\":1,\"result\":{\"isError\":true}}\n{\"id\":2,\"error\":{}}\n";
        assert!(check_replies(bad, 1, 2, Expect::Ok).is_err());
        assert_eq!(check_replies(bad, 1, 2, Expect::Error), Ok(2));
        assert!(check_replies(ok, 1, 2, Expect::Error).is_err());
        let mixed = b"{\"id\":1,\"result\":{}}\n{\"id\":2,\"error\":{}}\n";
        assert_eq!(check_replies(mixed, 1, 2, Expect::Any), Ok(1));
    }
}
