//! The life of a serve: reading while tools run, the bounded call queue, cancellation, and how
//! a serve ends. Each test serves the test server on a thread of its own
//! ([`support::Harness`]).

#[path = "../support/mod.rs"]
mod support;

mod end_of_input;
mod queue_backpressure;
mod responsiveness;
