//! Why a tool's `inputSchema` is refused: [`SchemaError`].

/// Why a tool's `inputSchema` cannot be used to validate its arguments.
///
/// Raised once, when the tool is registered; the caller adds the tool name. Every message names
/// the mechanism that refused the schema and how to fix it. Pointers (`#/properties/a`) locate
/// the problem inside the schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema is not a JSON object (for example `true`, an array or a string).
    #[error(
        "inputSchema must be a JSON object, got {found}: tool arguments are a JSON object, so \
         declare them as {{\"type\": \"object\", \"properties\": {{...}}}}"
    )]
    NotAnObject {
        /// What was found instead, with an article ("an array").
        found: &'static str,
    },
    /// The root schema does not say `"type": "object"`.
    #[error(
        "inputSchema root must declare \"type\": \"object\" (MCP tool arguments are always a JSON \
         object), found {found}: set \"type\": \"object\" at the root of the schema"
    )]
    RootNotObjectType {
        /// The root `type` as written in the schema, or `no "type"`.
        found: String,
    },
    /// A `$ref` points outside the schema document; remote resolution is disabled.
    #[error(
        "inputSchema refers to the external schema \"{reference}\" at {pointer}: resolving remote \
         $ref (http, https, file or any other document) is disabled because schemas are never \
         fetched; copy the referenced schema into \"$defs\" and refer to it as \
         \"#/$defs/<name>\""
    )]
    RemoteRef {
        /// The reference as written (or as resolved, when it could not be located).
        reference: String,
        /// JSON pointer (URI fragment form) of the `$ref` inside the schema.
        pointer: String,
    },
    /// A local `$ref` does not lead anywhere inside the schema.
    #[error(
        "inputSchema has a $ref at {pointer} that cannot be resolved inside the schema ({reason}): \
         point it at an existing local definition such as \"#/$defs/<name>\""
    )]
    UnresolvedRef {
        /// JSON pointer (URI fragment form) of the `$ref` inside the schema, `#` if unknown.
        pointer: String,
        /// What the reference resolver reported.
        reason: String,
    },
    /// `$schema` names a dialect that is not built in.
    #[error(
        "inputSchema declares \"$schema\": \"{uri}\", which is not a supported JSON Schema \
         dialect (custom meta-schemas are never fetched): remove \"$schema\" (JSON Schema \
         2020-12 is assumed) or use \"https://json-schema.org/draft/2020-12/schema\""
    )]
    UnknownDialect {
        /// The `$schema` URI.
        uri: String,
    },
    /// The schema does not conform to its meta-schema (misspelt type, bad regex, ...).
    #[error(
        "inputSchema is not a valid JSON Schema at {pointer}: {details}; fix the schema so that \
         it conforms to its meta-schema (JSON Schema 2020-12 unless \"$schema\" names another \
         draft)"
    )]
    Invalid {
        /// JSON pointer (URI fragment form) of the offending part of the schema.
        pointer: String,
        /// What is wrong there.
        details: String,
    },
}
