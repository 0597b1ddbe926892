//! The server under test: a child process spoken to over its stdin and stdout.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The protocol revision every run negotiates.
const PROTOCOL_VERSION: &str = "2025-06-18";

/// How long a closed server may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(10);

/// A spawned server. Dropping it kills the process if it is still running.
pub(crate) struct Server {
    child: Arc<Mutex<Child>>,
    pid: u32,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// Dropping the sender stops the watchdog; the flag tells whether it killed the server.
    watchdog: Option<mpsc::Sender<()>>,
    timed_out: Arc<AtomicBool>,
    limit: Duration,
    inherit: bool,
}

impl Server {
    /// Starts `argv` with piped stdin/stdout; stderr goes to the null device unless `inherit`.
    /// A watchdog kills the process after `limit`, so a hung server ends the run with an error.
    pub(crate) fn spawn(argv: &[String], inherit: bool, limit: Duration) -> Result<Self, String> {
        let (program, args) = argv.split_first().ok_or("no server command after `--`")?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if inherit {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()
            .map_err(|e| format!("cannot start `{program}`: {e}"))?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or("the server's stdout was not piped")?;
        let child = Arc::new(Mutex::new(child));
        let timed_out = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel::<()>();
        let (watched, flag) = (Arc::clone(&child), Arc::clone(&timed_out));
        thread::spawn(move || {
            if rx.recv_timeout(limit) == Err(RecvTimeoutError::Timeout) {
                flag.store(true, Ordering::SeqCst);
                // The process may have exited already; then there is nothing to kill.
                let _ = watched
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .kill();
            }
        });
        Ok(Self {
            child,
            pid,
            stdin,
            stdout: BufReader::with_capacity(1 << 20, stdout),
            watchdog: Some(tx),
            timed_out,
            limit,
            inherit,
        })
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Sends `initialize`, waits for its result, then sends `notifications/initialized`.
    pub(crate) fn initialize(&mut self) -> Result<(), String> {
        let request = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{{\
             \"protocolVersion\":\"{PROTOCOL_VERSION}\",\"capabilities\":{{}},\
             \"clientInfo\":{{\"name\":\"mcpline-bench\",\"version\":\"{}\"}}}}}}\n",
            env!("CARGO_PKG_VERSION")
        );
        self.send(request.as_bytes())?;
        let mut line = Vec::new();
        self.read_line(&mut line)?;
        let reply: Value = serde_json::from_slice(&line).map_err(|e| {
            format!(
                "the initialize answer is not JSON ({e}): {}",
                excerpt(&line)
            )
        })?;
        if reply.get("id") != Some(&Value::from(0)) || reply.get("result").is_none() {
            return Err(format!(
                "initialize was not answered with a result: {}",
                excerpt(&line)
            ));
        }
        self.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
    }

    /// Writes bytes to the server's stdin in one `write_all`.
    pub(crate) fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("the server's stdin is closed")?;
        stdin
            .write_all(bytes)
            .map_err(|e| self.failure(&format!("writing to the server: {e}")))
    }

    /// Appends the next line (with its newline) to `buf`.
    pub(crate) fn read_line(&mut self, buf: &mut Vec<u8>) -> Result<(), String> {
        match self.stdout.read_until(b'\n', buf) {
            Ok(0) => Err(self.failure("the server closed its stdout")),
            Ok(_) if buf.last() == Some(&b'\n') => Ok(()),
            Ok(_) => Err(self.failure("the server closed its stdout mid-line")),
            Err(e) => Err(self.failure(&format!("reading from the server: {e}"))),
        }
    }

    /// Appends exactly `lines` lines to `buf`, reading in large blocks. Only newlines are
    /// counted here; the lines are checked once the clock has stopped.
    pub(crate) fn read_lines(&mut self, buf: &mut Vec<u8>, lines: usize) -> Result<(), String> {
        let mut seen = 0;
        while seen < lines {
            let block = match self.stdout.fill_buf() {
                Ok([]) => {
                    let msg = format!("the server closed its stdout after {seen} of {lines} lines");
                    return Err(self.failure(&msg));
                }
                Ok(block) => block,
                Err(e) => return Err(self.failure(&format!("reading from the server: {e}"))),
            };
            // Take whole blocks until the last line is in; then stop right after it, so that
            // nothing that belongs to a later phase is consumed.
            let mut take = block.len();
            for (at, _) in block.iter().enumerate().filter(|&(_, &b)| b == b'\n') {
                seen += 1;
                if seen == lines {
                    take = at + 1;
                    break;
                }
            }
            buf.extend_from_slice(&block[..take]);
            self.stdout.consume(take);
        }
        Ok(())
    }

    /// Lends stdin to a writer thread; give it back with [`Server::restore_stdin`].
    pub(crate) fn take_stdin(&mut self) -> Result<ChildStdin, String> {
        self.stdin
            .take()
            .ok_or_else(|| "the server's stdin is closed".to_owned())
    }

    pub(crate) fn restore_stdin(&mut self, stdin: ChildStdin) {
        self.stdin = Some(stdin);
    }

    /// Closes stdin (end of input) and waits for the server to exit, killing it after a grace
    /// period.
    pub(crate) fn close(mut self) {
        self.stdin = None;
        let deadline = Instant::now() + EXIT_GRACE;
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        while Instant::now() < deadline {
            match child.try_wait() {
                Ok(None) => thread::sleep(Duration::from_millis(2)),
                _ => return,
            }
        }
    }

    /// An error message that says when the watchdog, not the server, ended the run, and
    /// where to look otherwise.
    fn failure(&self, what: &str) -> String {
        if self.timed_out.load(Ordering::SeqCst) {
            let limit = self.limit.as_secs();
            format!("{what}: the run exceeded --timeout {limit}s and the server was killed")
        } else if self.inherit {
            what.to_owned()
        } else {
            format!("{what} (rerun with --stderr inherit to see the server's log)")
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stdin = None;
        self.watchdog = None;
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        if let Ok(None) = child.try_wait() {
            let _ = child.kill();
        }
        let _ = child.wait();
    }
}

/// A field of `/proc/<pid>/status` in KiB (`VmRSS`, `VmHWM`); `None` where there is no procfs.
pub(crate) fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|row| {
        let rest = row.strip_prefix(field)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// The head of a line for an error message.
pub(crate) fn excerpt(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end();
    match text.char_indices().nth(300) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_owned(),
    }
}
