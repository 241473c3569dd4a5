//! The `cayley` subcommands, one module each. A command uses the shared
//! infrastructure of the crate (the argument types in `cli`, the job set-up
//! in `job`, the in-process cluster in `local`, the gRPC `server`, the
//! manifest, lock, result and output folder); commands do not use each
//! other (`.ci/stage-order.py` checks it).

pub mod bound;
pub mod info;
pub mod plan;
pub mod resume;
pub mod run;
pub mod serve;
pub mod status;
