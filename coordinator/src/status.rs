//! `cayley status`: progress of a running coordinator.

use crate::cli::StatusArgs;
use cayley_proto::StatusRequest;
use cayley_shared::search::resources::human_bytes;
use std::time::Duration;

pub fn status(args: StatusArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let reply = runtime.block_on(async {
        let mut client = cayley_worker::client::connect(
            &args.coordinator,
            args.token.as_deref(),
            args.tls_ca.as_ref(),
            Duration::from_secs(3),
        )
        .await?;
        client
            .status(StatusRequest {})
            .await
            .map_err(|s| anyhow::anyhow!("status refused: {}", s.message()))
            .map(|r| r.into_inner())
    })?;
    println!("job       {} ({})", reply.puzzle, reply.metric);
    if reply.finished {
        println!("state     finished, diameter {}", reply.depths.len().saturating_sub(1));
    } else {
        println!(
            "level     {} (tasks {}/{})",
            reply.level, reply.tasks_done, reply.tasks_total
        );
    }
    println!("states    {} of {}", reply.states_found, reply.reachable_states);
    println!("elapsed   {:.0} s", reply.elapsed_secs);
    if reply.level_eta_secs >= 0.0 {
        println!("level ETA {:.0} s", reply.level_eta_secs);
    }
    if let Some(io) = reply.level_io.filter(|io| io.lookups > 0) {
        println!(
            "inputs    {} read from the checkpoint, cache hit rate {:.1}%, worker seconds: {:.1} loading, {:.1} finding sources, {:.1} computing, {:.1} writing, {:.1} other",
            human_bytes(io.bytes_read as u128),
            100.0 * io.hits as f64 / io.lookups as f64,
            io.load_seconds,
            io.sources_seconds,
            io.compute_seconds,
            io.write_seconds,
            io.other_seconds
        );
    }
    println!("depths    {:?}", reply.depths);
    println!("workers   {}", reply.workers.len());
    for w in &reply.workers {
        println!(
            "  #{:<3} {:<24} {:>3} cores  {:>10} memory  {:>5} tasks  {:>8.1} M evals/s  {}",
            w.worker_id,
            w.name,
            w.cores,
            human_bytes(w.memory_budget as u128),
            w.tasks_done,
            w.evaluations_per_sec / 1e6,
            if w.busy {
                "busy".to_string()
            } else {
                format!("idle {:.0} s", w.idle_secs)
            }
        );
    }
    Ok(())
}
