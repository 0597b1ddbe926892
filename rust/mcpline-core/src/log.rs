//! The server's own log lines: always the real stderr, never a tool's capture.

/// Writes one `[mcpline] ...` line to the real stderr (the host's log), also while a capture holds
/// fd 2.
pub fn log_line(text: &str) {
    let mut line = String::with_capacity(text.len() + 10);
    line.push_str("[mcpline] ");
    line.push_str(text);
    line.push('\n');
    let _ = crate::capture::write_real_stderr(line.as_bytes());
}
