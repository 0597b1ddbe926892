//! The tools a server offers, by name: [`Registry`].

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::ServerError;
use crate::tool::{ToolHandler, ToolSpec, is_valid_tool_name};
use crate::validate::{ArgumentValidator, ResultValidator};

/// A tool as the server keeps it; queued calls share it (`Arc`), never copy its schemas.
pub(crate) struct RegisteredTool {
    pub(crate) spec: ToolSpec,
    pub(crate) name: Arc<str>,
    pub(crate) validator: ArgumentValidator,
    /// Checks results against the `outputSchema` (strict tools that declare one).
    pub(crate) results: Option<ResultValidator>,
    pub(crate) handler: Arc<dyn ToolHandler>,
}

/// Registered tools in name order (the order `tools/list` pages through).
#[derive(Clone, Default)]
pub(crate) struct Registry {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
}

impl Registry {
    /// Registers a tool: the name must follow the naming rule and be new, and the input schema
    /// (and the output schema of a strict tool) must compile.
    pub(crate) fn add(
        &mut self,
        spec: ToolSpec,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ServerError> {
        if !is_valid_tool_name(&spec.name) {
            return Err(ServerError::InvalidToolName(spec.name));
        }
        if self.tools.contains_key(&spec.name) {
            return Err(ServerError::DuplicateTool(spec.name));
        }
        let validator =
            ArgumentValidator::new(&spec.input_schema, spec.strict).map_err(|source| {
                ServerError::BadSchema {
                    tool: spec.name.clone(),
                    source,
                }
            })?;
        let results = match &spec.output_schema {
            Some(schema) if spec.strict => {
                Some(ResultValidator::new(schema).map_err(|source| {
                    ServerError::BadOutputSchema {
                        tool: spec.name.clone(),
                        source,
                    }
                })?)
            }
            _ => None,
        };
        let name: Arc<str> = Arc::from(spec.name.as_str());
        self.tools.insert(
            spec.name.clone(),
            Arc::new(RegisteredTool {
                spec,
                name,
                validator,
                results,
                handler,
            }),
        );
        Ok(())
    }

    /// Keeps only the tools named in `keep`.
    pub(crate) fn retain(&mut self, keep: &[String]) {
        self.tools.retain(|name, _| keep.iter().any(|k| k == name));
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.tools.get(name)
    }

    pub(crate) fn len(&self) -> usize {
        self.tools.len()
    }

    /// Names in order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// Tools in name order.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values().map(|t| &**t)
    }
}
