//! Experiments compare variants of how wright builds (a model, a prompt version, a note budget,
//! a starter policy) on real or suite requests.
//!
//! This crate holds what does not depend on where an experiment is stored: a [`Variant`] list
//! with weights, and [`assign`], which puts a unit (a user, a build, a suite request) in a
//! variant by hashing `experiment id : salt : unit` with SHA-256, the way GrowthBook and
//! Statsig do. The same unit always lands in the same variant of the same experiment; two
//! experiments (or one with a new salt) split units independently, because their hashes are.

//!
//! [`Metric`] and [`Outcome`] say what an experiment measures of a build, the same way for the
//! offline `wright eval` and the online experiments of `wright serve`.

mod assign;
pub mod compare;
mod metric;
mod report;
pub mod suite;

pub use assign::{ExperimentError, Variant, assign, bucket};
pub use compare::{Comparison, compare};
pub use metric::{Assignment, Metric, Outcome, Unit};
pub use report::{Arm, Mean, Rate, Report, arms_report};
pub use suite::{Suite, SuiteError, SuiteRequest};
