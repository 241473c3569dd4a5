//! The coordinator–worker protocol of cayley: gRPC types and stubs generated
//! from `cayley.proto` at build time. Only the coordinator and the worker
//! depend on this crate; the engine in `cayley-shared` knows no RPC.

#![allow(missing_docs, clippy::all)]
tonic::include_proto!("cayley.v1");

/// Protocol version; coordinator and worker must agree exactly.
/// Version 3: tasks are chunks of shards (one chunk file each), results
/// carry the chunk's index checksum, weighted counts and I/O statistics,
/// and workers state their memory budget.
/// Version 4: leases and reports carry the coordinator's id, so a worker
/// that outlives its coordinator registers again with the next one.
pub const PROTOCOL_VERSION: u32 = 4;
