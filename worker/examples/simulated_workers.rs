//! Simulated workers for the coordinator scale benchmark
//! (`bench/coordinator-scale.sh`; docs/history.md, "Coordinator scale with simulated workers"): N lightweight clients in one
//! process, each with its own connection, that register, lease tasks and
//! report valid results without computing anything. Each result is a real
//! chunk file (the coordinator reads its header and index, as for a real
//! one) holding only empty shards, reported as standing for one state so
//! that levels never come out empty; run the job with `--max-depth`.
//!
//! Usage: simulated_workers URL TOKEN WORKERS
//! Prints the tasks reported and the wall time once the job is over.

use cayley_proto::{lease_reply, task_update, LeaseRequest, RegisterRequest, TaskDone, TaskUpdate, PROTOCOL_VERSION};
use cayley_shared::files::checkpoint::CheckpointDir;
use cayley_shared::files::format::write_chunk;
use cayley_shared::files::WriteOptions;
use cayley_worker::client::{job_of, Link};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Only the coordinator's costs are measured: files without fsync.
const WRITE: WriteOptions = WriteOptions {
    durable: false,
    fail_disk_full_at: None,
};

async fn simulate(link: Link, name: String, reported: Arc<AtomicU64>) -> anyhow::Result<()> {
    let mut client = link.connect(Instant::now()).await?;
    let reply = client
        .register(RegisterRequest {
            protocol_version: PROTOCOL_VERSION,
            worker_name: name,
            cores: 1,
            memory_budget: 0,
        })
        .await?
        .into_inner();
    let spec = reply.job.ok_or_else(|| anyhow::anyhow!("no job"))?;
    let job = job_of(&spec)?;
    let checkpoint = CheckpointDir::create(&PathBuf::from(&spec.checkpoint_dir))?;
    let zeros = Arc::new(vec![0u64; job.space.shard_words()]);
    loop {
        let request = LeaseRequest {
            worker_id: reply.worker_id,
            coordinator_id: reply.coordinator_id,
            running_tasks: 0,
        };
        let task = match client.lease(request).await?.into_inner().reply {
            Some(lease_reply::Reply::Task(task)) => task,
            Some(lease_reply::Reply::WaitMs(ms)) => {
                tokio::time::sleep(Duration::from_millis(ms as u64)).await;
                continue;
            }
            _ => return Ok(()),
        };
        let level = task.from_level + 1;
        let id = job
            .chunking
            .id(job.fingerprint(), level, task.chunk, job.space.shard_words());
        let path = checkpoint.chunk_path(level, task.chunk);
        let shards = id.shards as usize;
        let zeros = zeros.clone();
        let (header, bytes) = tokio::task::spawn_blocking(move || {
            let _ = std::fs::create_dir(path.parent().expect("level directory"));
            write_chunk(&path, id, std::iter::repeat_n(&zeros[..], shards), WRITE)
        })
        .await??;
        let done = TaskDone {
            stored: header.popcount,
            states: 1,
            classes: 1,
            file_bytes: bytes,
            index_checksum: header.index_checksum,
            ..TaskDone::default()
        };
        let update = TaskUpdate {
            worker_id: reply.worker_id,
            lease_id: task.lease_id,
            update: Some(task_update::Update::Done(done)),
            coordinator_id: reply.coordinator_id,
        };
        client.report(tokio_stream::iter([update])).await?;
        reported.fetch_add(1, Ordering::Relaxed);
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, token, workers] = &args[..] else {
        anyhow::bail!("usage: simulated_workers URL TOKEN WORKERS");
    };
    let workers: usize = workers.parse()?;
    let link = Link::new(url, Some(token), None, Duration::from_secs(30))?;
    let reported = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..workers {
        set.spawn(simulate(link.clone(), format!("sim-{}", i), reported.clone()));
    }
    while let Some(r) = set.join_next().await {
        if let Ok(Err(e)) = r {
            eprintln!("a simulated worker stopped: {:#}", e);
        }
    }
    println!(
        "{} simulated workers reported {} tasks in {:.2} s",
        workers,
        reported.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
