//! A cluster that survives its own failures (docs/cluster.md, "When things fail"): one test binary
//! (one link) for the tests that kill, cut off and restart real
//! coordinator and worker processes.
//!
//! - `coordinator_restart`: workers outlive their coordinator; what a
//!   worker and `status` say when something is missing.
//! - `partitions`: links cut and healed in network namespaces (root).
//! - `chaos`: seeded random kills of coordinator and workers.
//! - `network_fs`: the checkpoint through sshfs (root, sshd, sshfs).

mod chaos;
mod coordinator_restart;
mod network_fs;
mod partitions;
