//! Test-only fault injection: the one place where either binary takes it.
//!
//! The tests of a job that stops and resumes need a disk that fills up at a
//! chosen chunk, and the tests of the disk check need a filesystem with a
//! chosen free space. Each is a hidden option of the commands it concerns,
//! also read from an environment variable so a test can set it on any
//! command line it runs:
//!
//! | option | variable | taken by | effect |
//! |---|---|---|---|
//! | `--fault-disk-full LEVEL:CHUNK` | `CAYLEY_FAULT_DISK_FULL` | `cayley run`, `cayley resume`, `cayley-worker` | the chunk file of `(LEVEL, CHUNK)` fails to be written with the full-disk error ([`WriteOptions::fail_disk_full_at`]) |
//! | `--fault-free-bytes N` | `CAYLEY_FAULT_FREE_BYTES` | `cayley run`, `cayley serve`, `cayley info` | every checkpoint filesystem has `N` bytes free ([`FreeSpace::Assumed`]) |
//!
//! They are read once, with the rest of the command line, and handed down
//! as options ([`WriteOptions`] to the chunk writers, [`FreeSpace`] to the
//! disk check); storage code reads no environment. Neither is shown in
//! `--help` nor meant for users.

use cayley_shared::files::WriteOptions;
use cayley_shared::search::resources::FreeSpace;

/// Variable of `--fault-disk-full`.
pub const DISK_FULL_ENV: &str = "CAYLEY_FAULT_DISK_FULL";
/// Variable of `--fault-free-bytes`.
pub const FREE_BYTES_ENV: &str = "CAYLEY_FAULT_FREE_BYTES";

/// The injected full disk, for a command that writes chunk files.
#[derive(clap::Args, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskFullFault {
    /// Test-only: the chunk file of LEVEL:CHUNK fails as if the disk were full.
    #[arg(long = "fault-disk-full", hide = true, env = DISK_FULL_ENV, value_name = "LEVEL:CHUNK", value_parser = level_chunk)]
    pub fault_disk_full: Option<(u32, u64)>,
}

impl DiskFullFault {
    /// The options of this process's checkpoint writers: fsynced when
    /// `durable`, with this fault.
    pub fn write_options(self, durable: bool) -> WriteOptions {
        WriteOptions {
            durable,
            fail_disk_full_at: self.fault_disk_full,
        }
    }
}

/// The injected free space, for a command that checks the disk.
#[derive(clap::Args, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FreeSpaceFault {
    /// Test-only: take every filesystem to have N bytes free.
    #[arg(long = "fault-free-bytes", hide = true, env = FREE_BYTES_ENV, value_name = "N")]
    pub fault_free_bytes: Option<u64>,
}

impl FreeSpaceFault {
    /// How the disk check finds the free space.
    pub fn free_space(self) -> FreeSpace {
        self.fault_free_bytes.map_or(FreeSpace::Measured, FreeSpace::Assumed)
    }
}

/// Parses `LEVEL:CHUNK`, two whole numbers.
fn level_chunk(text: &str) -> Result<(u32, u64), String> {
    let parsed = text
        .split_once(':')
        .and_then(|(level, chunk)| Some((level.trim().parse().ok()?, chunk.trim().parse().ok()?)));
    parsed.ok_or_else(|| format!("'{}' is not LEVEL:CHUNK (two whole numbers)", text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Both {
        #[command(flatten)]
        disk: DiskFullFault,
        #[command(flatten)]
        free: FreeSpaceFault,
    }

    #[test]
    fn faults_parse_from_the_hidden_options() {
        let both = Both::try_parse_from(["x", "--fault-disk-full", "4:12", "--fault-free-bytes", "1000"]).unwrap();
        assert_eq!(both.disk.fault_disk_full, Some((4, 12)));
        let write = both.disk.write_options(false);
        assert!(write.fails_disk_full_at(4, 12) && !write.fails_disk_full_at(4, 11) && !write.durable);
        assert_eq!(both.free.free_space(), FreeSpace::Assumed(1000));
        assert_eq!(FreeSpace::Assumed(1000).of(std::path::Path::new("/")), Some(1000));
        for bad in ["4", "4:", ":3", "a:b", "-1:0", "4:12:1"] {
            let flag = format!("--fault-disk-full={}", bad);
            let e = Both::try_parse_from(["x", flag.as_str()]).unwrap_err().to_string();
            assert!(e.contains("LEVEL:CHUNK"), "{}: {}", bad, e);
        }
    }

    #[test]
    fn without_them_writes_are_durable_and_the_disk_is_measured() {
        // (Unless the test itself runs with the variables set.)
        if std::env::var_os(DISK_FULL_ENV).is_some() || std::env::var_os(FREE_BYTES_ENV).is_some() {
            return;
        }
        let none = Both::try_parse_from(["x"]).unwrap();
        assert_eq!(none.disk.write_options(true), WriteOptions::default());
        assert_eq!(none.free.free_space(), FreeSpace::Measured);
    }
}
