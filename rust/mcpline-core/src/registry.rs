//! What a server offers, one map per primitive: tools and prompts by name ([`Registry`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::ServerError;
use crate::prompt::PromptSpec;
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

/// A prompt as the server keeps it: its declaration, and the tool-like runner that makes its
/// messages (run like a tool call: queued, captured, with its arguments validated).
pub(crate) struct RegisteredPrompt {
    pub(crate) spec: PromptSpec,
    pub(crate) runner: Arc<RegisteredTool>,
}

/// Registered tools and prompts in name order (the order their lists page through).
#[derive(Clone, Default)]
pub(crate) struct Registry {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    prompts: BTreeMap<String, Arc<RegisteredPrompt>>,
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
        let tool = Self::compile(spec, handler)?;
        self.tools.insert(tool.spec.name.clone(), Arc::new(tool));
        Ok(())
    }

    /// Registers a prompt whose messages `handler` makes from the arguments `runner` declares
    /// (its input schema; its name is the prompt's).
    pub(crate) fn add_prompt(
        &mut self,
        spec: PromptSpec,
        runner: ToolSpec,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ServerError> {
        if !is_valid_tool_name(&spec.name) || self.prompts.contains_key(&spec.name) {
            return Err(ServerError::BadPromptName(spec.name));
        }
        let runner = Arc::new(Self::compile(runner, handler)?);
        self.prompts.insert(
            spec.name.clone(),
            Arc::new(RegisteredPrompt { spec, runner }),
        );
        Ok(())
    }

    /// A tool (or a prompt's runner) with its schemas compiled.
    fn compile(
        spec: ToolSpec,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<RegisteredTool, ServerError> {
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
        Ok(RegisteredTool {
            spec,
            name,
            validator,
            results,
            handler,
        })
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

    pub(crate) fn prompt(&self, name: &str) -> Option<&Arc<RegisteredPrompt>> {
        self.prompts.get(name)
    }

    /// Prompts in name order.
    pub(crate) fn prompts(&self) -> impl ExactSizeIterator<Item = &PromptSpec> {
        self.prompts.values().map(|p| &p.spec)
    }
}
