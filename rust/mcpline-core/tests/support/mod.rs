//! Shared by the integration test programs: a test server with its client ([`harness`]) and the
//! means to run a capture case in a child process of its own ([`capture`]).
//!
//! Each program includes its own private copy of this module and uses a different subset of it,
//! hence the allowances.
#![allow(dead_code, unreachable_pub)]

pub mod capture;
pub mod harness;

#[allow(unused_imports)]
pub use capture::*;
#[allow(unused_imports)]
pub use harness::*;
