//! Validation of a tool's structured result against its `outputSchema`.

use serde_json::Value;

use super::SchemaError;
use super::compiled::Compiled;
use super::messages::Problems;
use super::render::Subject;

/// A tool's result check, built once at registration from its `outputSchema` (the same
/// validator, compiled as late, and the same wording as [`super::ArgumentValidator`]).
pub struct ResultValidator {
    /// The schema and its validator.
    compiled: Compiled,
    /// The schema is `{"result": ...}` around a non-object type: paths inside the result are
    /// reported below `/result`.
    subject: Subject,
}

impl std::fmt::Debug for ResultValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultValidator").finish_non_exhaustive()
    }
}

impl ResultValidator {
    /// Compiles an `outputSchema` (an object schema; only local references).
    ///
    /// # Errors
    ///
    /// [`SchemaError`], as for [`super::ArgumentValidator::new`].
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        let (compiled, root) = Compiled::new(schema)?;
        let subject = if is_wrapper(root) {
            Subject::Wrapped
        } else {
            Subject::Result
        };
        Ok(Self { compiled, subject })
    }

    /// Checks a structured result (`None`: the tool returned none).
    ///
    /// # Errors
    ///
    /// One line per problem (at most ten), each naming the place in the result, for example
    /// `result "items/2": "3" is not of type "integer"`.
    pub fn check(&self, structured: Option<&Value>) -> Result<(), String> {
        let Some(value) = structured else {
            return Err("the tool returned content without a structured result".to_owned());
        };
        let validator = self
            .compiled
            .validator()
            .map_err(|error| format!("the tool's outputSchema cannot be used: {error}"))?;
        if validator.is_valid(value) {
            return Ok(());
        }
        let errors = validator.iter_errors(value);
        Err(
            Problems::collect(self.compiled.schema(), self.subject, errors)
                .into_message()
                .unwrap_or_else(|| "the result does not match the tool's outputSchema".to_owned()),
        )
    }
}

/// `{"type": "object", "properties": {"result": ...}, "required": ["result"]}` and nothing
/// else that constrains: the form a non-object result is sent in.
fn is_wrapper(root: &serde_json::Map<String, Value>) -> bool {
    let only_result = root
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.len() == 1 && p.contains_key("result"));
    let required = root.get("required").and_then(Value::as_array);
    only_result && required.is_some_and(|r| r.len() == 1 && r[0] == "result")
}
