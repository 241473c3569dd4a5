//! Helpers for the end-to-end tests live in the test files.
