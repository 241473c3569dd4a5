//! Fuzz tests on stable Rust (proptest): every reader of outside input gets
//! random, generated and mutated inputs and must return a clear error or a
//! result that round-trips, never panic. About 10⁵ cases in all; a failure
//! prints its minimal input (nothing is written to the source tree).
//!
//! The manifest and journal readers, which live in the coordinator, are
//! fuzzed there (`coordinator/src/manifest/fuzz_tests.rs`).

mod chunks;
mod edits;
mod perm_files;
mod puzzles;
mod specs;
mod tws_files;
