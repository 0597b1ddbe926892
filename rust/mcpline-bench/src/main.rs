//! `mcpline-bench`: a compiled client that measures an MCP server over stdio or Streamable HTTP.
//!
//! In the stdio modes it starts the server command given after `--` with piped stdin/stdout,
//! negotiates protocol revision 2025-06-18 (`initialize`, then `notifications/initialized`),
//! runs one measurement and prints its figures as one JSON object on stdout:
//!
//! ```text
//! mcpline-bench pipelined -n 50000 --tool add --args '{"a":1,"b":2}' -- python server.py
//! ```
//!
//! Every response is checked once the clock has stopped: one per request id, none an error
//! (JSON-RPC error or `isError` result) unless `--expect error` or `--expect any` says so.
//! A server that sends lines other than responses (notifications) fails the check.
//!
//! The `http` mode speaks Streamable HTTP to a server already listening at `--url` instead,
//! from `--clients` concurrent connections:
//!
//! ```text
//! mcpline-bench http --url http://127.0.0.1:8000/mcp --clients 16 -n 20000
//! ```

mod calls;
mod http;
mod modes;
mod server;
mod wire;

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

use crate::calls::{CallTemplate, Expect};
use crate::modes::Setup;

const USAGE: &str = "\
usage: mcpline-bench MODE [options] -- SERVER_COMMAND [ARGS...]
       mcpline-bench http --url http://HOST:PORT/PATH [options]

modes:
  start       spawn -> initialize answered, -n times (default 10), a fresh process each time
  lockstep    -n calls (default 5000) one at a time after --warmup calls: p50/p90/p99 latency
  pipelined   -n calls (default 20000) written by one thread while another reads: calls/s
  burst       -n calls (default 10000) at once: idle RSS after initialize, peak RSS (VmHWM)
  http        -n calls (default 10000) over Streamable HTTP, spread over --clients concurrent
              keep-alive connections, after --warmup calls spread the same way: requests/s
              and p50/p90/p99 latency (the server is already listening at --url)

options:
  -n, --count N     calls, burst size or starts (see above)
  --warmup N        untimed calls before lockstep and pipelined runs (default 500)
  --tool NAME       tool to call (default add)
  --args JSON       its arguments, a JSON object (default {\"a\":1,\"b\":2})
  --expect KIND     ok (default): no response may be an error; error: all must be; any
  --settle-ms MS    burst: pause between initialize and the idle RSS reading (default 300)
  --timeout S       kill the server and fail after S seconds (default 300)
  --stderr MODE     null (default) or inherit: where the server's stderr goes

http options:
  --url URL         the MCP endpoint, http://HOST:PORT/PATH
  --clients C       concurrent clients, each a thread with its own connection (default 1)
  --revision REV    2026-07-28 (default: stateless requests) or a handshake revision such as
                    2025-06-18 (each client initializes a session first)
  --timeout S       fail when the server is silent for S seconds (default 300)
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
    Http,
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
        "http" => Mode::Http,
        other => return Err(format!("unknown mode `{other}` (see --help)")),
    };
    let is_http = matches!(mode, Mode::Http);
    if is_http && !argv.is_empty() {
        return Err("the http mode takes --url, not a server command".into());
    }
    if !is_http && argv.is_empty() {
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
    let mut url = None;
    let mut clients = 1;
    let mut revision = "2026-07-28".to_owned();
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
            "--url" | "--clients" | "--revision" if !is_http => {
                return Err(format!("{flag} is an option of the http mode only"));
            }
            "--url" => url = Some(wire::Url::parse(value()?)?),
            "--clients" => clients = number(flag, value()?)?,
            "--revision" => {
                value()?.clone_into(&mut revision);
                http::HttpSetup::check_revision(&revision)?;
            }
            other => return Err(format!("unknown option `{other}` (see --help)")),
        }
    }
    let timeout = Duration::from_secs(timeout_s as u64);
    let setup = Setup {
        argv: argv.clone(),
        inherit_stderr,
        timeout,
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
        Mode::Http => {
            let setup = http::HttpSetup {
                url: url.ok_or("the http mode needs --url http://HOST:PORT/PATH")?,
                clients,
                revision,
                timeout,
                tool: tool.clone(),
                args: tool_args,
                expect,
            };
            ("http", http::run(&setup, warmup, count.unwrap_or(10000))?)
        }
    };
    let mut out = serde_json::Map::new();
    out.insert("mode".into(), name.into());
    out.insert("tool".into(), tool.into());
    if !is_http {
        out.insert("command".into(), argv.into());
    }
    if let Value::Object(fields) = report {
        out.extend(fields);
    }
    Ok(Some(Value::Object(out)))
}

fn number(flag: &str, text: &str) -> Result<usize, String> {
    text.parse()
        .map_err(|_| format!("{flag} takes a whole number, not {text}"))
}
