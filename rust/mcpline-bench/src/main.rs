//! `mcpline-bench`: a compiled client that measures a stdio MCP server.
//!
//! It starts the server command given after `--` with piped stdin/stdout, negotiates protocol
//! revision 2025-06-18 (`initialize`, then `notifications/initialized`), runs one measurement
//! and prints its figures as one JSON object on stdout:
//!
//! ```text
//! mcpline-bench pipelined -n 50000 --tool add --args '{"a":1,"b":2}' -- python server.py
//! ```
//!
//! Every response is checked once the clock has stopped: one per request id, none an error
//! (JSON-RPC error or `isError` result) unless `--expect error` or `--expect any` says so.
//! A server that sends lines other than responses (notifications) fails the check.

mod calls;
mod modes;
mod server;

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

use crate::calls::{CallTemplate, Expect};
use crate::modes::Setup;

const USAGE: &str = "\
usage: mcpline-bench MODE [options] -- SERVER_COMMAND [ARGS...]

modes:
  start       spawn -> initialize answered, -n times (default 10), a fresh process each time
  lockstep    -n calls (default 5000) one at a time after --warmup calls: p50/p90/p99 latency
  pipelined   -n calls (default 20000) written by one thread while another reads: calls/s
  burst       -n calls (default 10000) at once: idle RSS after initialize, peak RSS (VmHWM)

options:
  -n, --count N     calls, burst size or starts (see above)
  --warmup N        untimed calls before lockstep and pipelined runs (default 500)
  --tool NAME       tool to call (default add)
  --args JSON       its arguments, a JSON object (default {\"a\":1,\"b\":2})
  --expect KIND     ok (default): no response may be an error; error: all must be; any
  --settle-ms MS    burst: pause between initialize and the idle RSS reading (default 300)
  --timeout S       kill the server and fail after S seconds (default 300)
  --stderr MODE     null (default) or inherit: where the server's stderr goes
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(Some(report)) => {
            let mut out = io::stdout().lock();
            match writeln!(out, "{report}") {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            }
        }
        Ok(None) => {
            let _ = io::stdout().lock().write_all(USAGE.as_bytes());
            ExitCode::SUCCESS
        }
        Err(message) => {
            let _ = writeln!(io::stderr().lock(), "mcpline-bench: {message}");
            ExitCode::from(2)
        }
    }
}

#[derive(Clone, Copy)]
enum Mode {
    Start,
    Lockstep,
    Pipelined,
    Burst,
}

/// Parses the command line and runs the measurement; `None` means help was asked for.
fn run(args: &[String]) -> Result<Option<Value>, String> {
    let (ours, argv) = match args.iter().position(|a| a == "--") {
        Some(at) => (&args[..at], args[at + 1..].to_vec()),
        None => (args, Vec::new()),
    };
    if ours.is_empty() || ours.iter().any(|a| a == "-h" || a == "--help") {
        return Ok(None);
    }
    let mode = match ours[0].as_str() {
        "start" => Mode::Start,
        "lockstep" => Mode::Lockstep,
        "pipelined" => Mode::Pipelined,
        "burst" => Mode::Burst,
        other => return Err(format!("unknown mode `{other}` (see --help)")),
    };
    if argv.is_empty() {
        return Err("no server command: put it after `--`".into());
    }
    let mut count = None;
    let mut warmup = 500;
    let mut tool = "add".to_owned();
    let mut tool_args = json!({"a": 1, "b": 2});
    let mut expect = Expect::Ok;
    let mut settle_ms = 300;
    let mut timeout_s = 300;
    let mut inherit_stderr = false;
    let mut rest = ours[1..].iter();
    while let Some(flag) = rest.next() {
        let mut value = || rest.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "-n" | "--count" => count = Some(number(flag, value()?)?),
            "--warmup" => warmup = number(flag, value()?)?,
            "--tool" => value()?.clone_into(&mut tool),
            "--args" => {
                let text = value()?;
                tool_args = serde_json::from_str(text)
                    .map_err(|e| format!("--args is not JSON ({e}): {text}"))?;
                if !tool_args.is_object() {
                    return Err(format!("--args must be a JSON object, not {text}"));
                }
            }
            "--expect" => {
                expect = match value()?.as_str() {
                    "ok" => Expect::Ok,
                    "error" => Expect::Error,
                    "any" => Expect::Any,
                    other => return Err(format!("--expect takes ok, error or any, not {other}")),
                }
            }
            "--settle-ms" => settle_ms = number(flag, value()?)?,
            "--timeout" => timeout_s = number(flag, value()?)?,
            "--stderr" => {
                inherit_stderr = match value()?.as_str() {
                    "null" => false,
                    "inherit" => true,
                    other => return Err(format!("--stderr takes null or inherit, not {other}")),
                }
            }
            other => return Err(format!("unknown option `{other}` (see --help)")),
        }
    }
    let setup = Setup {
        argv: argv.clone(),
        inherit_stderr,
        timeout: Duration::from_secs(timeout_s as u64),
        call: CallTemplate::new(&tool, &tool_args),
        expect,
    };
    let (name, report) = match mode {
        Mode::Start => ("start", modes::start(&setup, count.unwrap_or(10))?),
        Mode::Lockstep => (
            "lockstep",
            modes::lockstep(&setup, warmup, count.unwrap_or(5000))?,
        ),
        Mode::Pipelined => (
            "pipelined",
            modes::pipelined(&setup, warmup, count.unwrap_or(20000))?,
        ),
        Mode::Burst => (
            "burst",
            modes::burst(
                &setup,
                count.unwrap_or(10000),
                Duration::from_millis(settle_ms as u64),
            )?,
        ),
    };
    let mut out = serde_json::Map::new();
    out.insert("mode".into(), name.into());
    out.insert("tool".into(), tool.into());
    out.insert("command".into(), argv.into());
    if let Value::Object(fields) = report {
        out.extend(fields);
    }
    Ok(Some(Value::Object(out)))
}

fn number(flag: &str, text: &str) -> Result<usize, String> {
    text.parse()
        .map_err(|_| format!("{flag} takes a whole number, not {text}"))
}
