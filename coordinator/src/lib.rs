//! The library behind `cayley`: everything the command does, so that the
//! end-to-end table tests run the very code users run (`cayley run` in
//! process: [`commands::run::run`]) rather than a driver of their own.
//!
//! `commands/` holds one module per subcommand; the other modules are the
//! infrastructure they share: `cli` (arguments), `planning` (a job's
//! [`planning::Plan`], from its arguments or its manifest), `local` (the
//! coordinator and workers in one process), `server/` (the gRPC
//! coordinator), `manifest`, `lock`, `made_dir`, `out`, `progress`, `result` and `svg`.

pub mod cli;
pub mod commands;
pub mod local;
pub mod lock;
pub mod made_dir;
pub mod manifest;
pub mod out;
pub mod planning;
pub mod progress;
pub mod result;
pub mod server;
pub mod svg;
