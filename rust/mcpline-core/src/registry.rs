//! What a server offers, one map per primitive: tools and prompts by name, resources by URI and
//! resource templates in the order they were added ([`Registry`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::ServerError;
use crate::prompt::PromptSpec;
use crate::resource::ResourceSpec;
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

/// A resource or a resource template as the server keeps it: its declaration, and the
/// tool-like runner that reads it.
pub(crate) struct RegisteredResource {
    pub(crate) spec: ResourceSpec,
    pub(crate) runner: Arc<RegisteredTool>,
}

/// Registered tools and prompts in name order (the order their lists page through), resources
/// in URI order, templates in the order they were added (the order URIs are matched in).
#[derive(Clone, Default)]
pub(crate) struct Registry {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    prompts: BTreeMap<String, Arc<RegisteredPrompt>>,
    resources: BTreeMap<String, Arc<RegisteredResource>>,
    templates: Vec<Arc<RegisteredResource>>,
    completer: Option<Arc<RegisteredTool>>,
}

impl Registry {
    /// Registers a tool: the name must follow the naming rule and be new, and the input schema
    /// (and the output schema of a strict tool) must be usable (checked now, compiled now or on
    /// the tool's first call, see `validate`).
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

    /// Registers a resource or a template that `handler` reads; `runner` declares its arguments
    /// (none for a fixed resource, exactly the template's variables for a template).
    pub(crate) fn add_resource(
        &mut self,
        spec: ResourceSpec,
        runner: ToolSpec,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ServerError> {
        let bad = |why: String| ServerError::BadResource {
            uri: spec.uri().to_owned(),
            why,
        };
        let uri = spec.uri();
        let taken = if spec.is_template() {
            self.templates.iter().any(|t| t.spec.uri() == uri)
        } else {
            self.resources.contains_key(uri)
        };
        if taken {
            return Err(bad("a resource with this URI is already registered".into()));
        }
        let variables = spec.variables();
        let properties: Vec<&str> = runner.input_schema["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let mut expected = variables.clone();
        expected.sort_unstable();
        let mut declared = properties.clone();
        declared.sort_unstable();
        if expected != declared {
            return Err(bad(format!(
                "its function's parameters ({}) must be the URI's variables ({})",
                if declared.is_empty() {
                    "none".into()
                } else {
                    declared.join(", ")
                },
                if expected.is_empty() {
                    "none".into()
                } else {
                    expected.join(", ")
                },
            )));
        }
        let runner = Arc::new(Self::compile(runner, handler)?);
        let resource = Arc::new(RegisteredResource { spec, runner });
        if resource.spec.is_template() {
            self.templates.push(resource);
        } else {
            self.resources
                .insert(resource.spec.uri().to_owned(), resource);
        }
        Ok(())
    }

    /// Sets the completer: `handler` gets a `completion/complete` request's `ref`, `argument` and
    /// `context` (as `runner` declares them) and makes `{"values": [...]}`.
    pub(crate) fn set_completer(
        &mut self,
        runner: ToolSpec,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ServerError> {
        self.completer = Some(Arc::new(Self::compile(runner, handler)?));
        Ok(())
    }

    pub(crate) fn completer(&self) -> Option<&Arc<RegisteredTool>> {
        self.completer.as_ref()
    }

    /// Whether there is anything to complete: a prompt's arguments or a template's variables.
    pub(crate) fn offers_completions(&self) -> bool {
        !self.prompts.is_empty() || !self.templates.is_empty()
    }

    /// The template registered with exactly this URI template.
    pub(crate) fn template(&self, uri_template: &str) -> Option<&Arc<RegisteredResource>> {
        self.templates.iter().find(|t| t.spec.uri() == uri_template)
    }

    /// A tool (or a prompt's runner) with its schemas checked.
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

    /// Whether any resource or template is registered (the `resources` capability).
    pub(crate) fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    /// Fixed resources in URI order.
    pub(crate) fn resources(&self) -> impl ExactSizeIterator<Item = &ResourceSpec> {
        self.resources.values().map(|r| &r.spec)
    }

    /// Templates in the order they were added.
    pub(crate) fn templates(&self) -> impl ExactSizeIterator<Item = &ResourceSpec> {
        self.templates.iter().map(|r| &r.spec)
    }

    /// What serves `uri`: the fixed resource with that URI, else the first template matching it.
    pub(crate) fn resource_for(&self, uri: &str) -> Option<&Arc<RegisteredResource>> {
        self.resources.get(uri).or_else(|| {
            self.templates
                .iter()
                .find(|t| t.spec.matches(uri).is_some())
        })
    }

    /// Prompts in name order.
    pub(crate) fn prompts(&self) -> impl ExactSizeIterator<Item = &PromptSpec> {
        self.prompts.values().map(|p| &p.spec)
    }
}
