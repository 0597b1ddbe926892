//! The public face of the core: [`Server`], a set of tools with an identity and a configuration,
//! served over any [`Transport`] or the process's protected stdio.

use std::sync::Arc;

use crate::capture::ProtectedStdio;
use crate::config::{ServeEnd, ServerConfig, ServerInfo, StopCheck};
use crate::error::ServerError;
use crate::registry::Registry;
use crate::session::Session;
use crate::tool::{ToolHandler, ToolSpec};
use crate::transport::{StdioTransport, Transport};

/// An MCP server: tools plus identity and configuration.
#[derive(Clone)]
pub struct Server {
    info: ServerInfo,
    config: ServerConfig,
    registry: Registry,
    stop_check: Option<StopCheck>,
}

impl Server {
    /// A server with no tools and the default configuration.
    #[must_use]
    pub fn new(info: ServerInfo) -> Self {
        Self {
            info,
            config: ServerConfig::default(),
            registry: Registry::default(),
            stop_check: None,
        }
    }

    /// Installs a check the worker runs every [`STOP_POLL`] while idle and after each call; when
    /// it returns true the server stops: calls still queued are answered with an error and
    /// [`Server::serve`] returns [`ServeEnd::Interrupted`]. It is not run while a call executes
    /// (the call is on the worker thread; a tool observes interruption itself, as a Python tool
    /// sees `KeyboardInterrupt`). The Python binding uses it to react to signals.
    ///
    /// [`STOP_POLL`]: crate::STOP_POLL
    pub fn set_stop_check(&mut self, check: StopCheck) {
        self.stop_check = Some(check);
    }

    /// The configuration, for adjusting before serving.
    pub fn config_mut(&mut self) -> &mut ServerConfig {
        &mut self.config
    }

    /// The identity, for adjusting before serving.
    pub fn info_mut(&mut self) -> &mut ServerInfo {
        &mut self.info
    }

    /// Registers a tool.
    ///
    /// # Errors
    /// An invalid or duplicate name, or an input schema that cannot be compiled.
    pub fn add_tool(
        &mut self,
        spec: ToolSpec,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ServerError> {
        self.registry.add(spec, handler)
    }

    /// Keeps only the tools named in `keep` (the CLI's `--allow`).
    pub fn retain_tools(&mut self, keep: &[String]) {
        self.registry.retain(keep);
    }

    /// Names of the registered tools, sorted.
    #[must_use]
    pub fn tool_names(&self) -> Vec<String> {
        self.registry.names().map(str::to_owned).collect()
    }

    /// Serves `transport` until end of input (or a dead output channel). Tool calls run on the
    /// calling thread; a reader thread answers everything else at once.
    pub fn serve(&self, transport: Arc<dyn Transport>) -> ServeEnd {
        let session = Session::new(
            self.info.clone(),
            self.config.clone(),
            self.registry.clone(),
            self.stop_check.clone(),
            transport,
        );
        session.run()
    }

    /// Serves the process's stdin/stdout with the standard descriptors protected (fd 1 goes to
    /// the real stderr, fd 0 reads the null device) until end of input.
    ///
    /// # Errors
    /// The descriptors could not be protected.
    pub fn serve_stdio(&self) -> Result<ServeEnd, ServerError> {
        let mut protected = ProtectedStdio::install()?;
        let (input, output) = protected.take_streams();
        let transport = Arc::new(StdioTransport::new(
            input,
            output,
            self.config.max_line_bytes,
        ));
        let mut server = self.clone();
        server.config.exit_on_hang = true;
        server.config.watch_parent = true;
        let end = server.serve(transport);
        drop(protected);
        Ok(end)
    }
}
