//! Tool-argument and result validation ([`mcpline_core::ArgumentValidator`],
//! [`mcpline_core::ResultValidator`]): one module per rule, named by the rule.

// Building a validator from a schema.
mod compiling_on_first_use_changes_nothing_a_tool_sees;
mod invalid_schema_is_rejected_with_its_location;
mod local_defs_refs_resolve;
mod remote_ref_is_rejected_at_compile_time;

// The arguments object as a whole.
mod absent_arguments_are_an_empty_object;
mod non_object_arguments_are_rejected;
mod valid_arguments_are_returned_without_copying;

// Argument names: unknown, dropped or missing.
mod explicit_additional_properties_lets_unknown_arguments_through;
mod lenient_mode_drops_unknown_arguments_and_validates_the_rest;
mod missing_required_argument_is_reported;
mod unknown_argument_is_rejected_with_suggestion_and_valid_list;

// Argument values.
mod enum_and_literal_violations_list_the_allowed_values;
mod nested_errors_name_the_json_pointer_path;
mod optional_values_accept_null_through_any_of;
mod values_are_never_coerced;

// Results.
mod results_are_checked_against_the_output_schema;

// The messages.
mod check_never_panics_on_arbitrary_json;
mod several_problems_are_reported_one_per_line_and_capped;
