//! `cayley status`: progress of a running coordinator.

use crate::cli::StatusArgs;
use cayley_proto::StatusRequest;
use cayley_shared::units::human_bytes;
use cayley_worker::client::link::{status_reason, CALL_TIMEOUT};
use cayley_worker::client::Link;
use std::time::Duration;

/// Asks a running coordinator for its progress and prints it.
pub fn status(args: StatusArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let reply = runtime.block_on(async {
        let link = Link::new(
            &args.coordinator,
            args.token.as_deref(),
            args.tls_ca.as_ref(),
            Duration::ZERO,
        )?;
        // One attempt: `status` is asked by a person, who wants to know at
        // once that nothing is there.
        let mut client = link
            .connect_once()
            .await
            .map_err(|why| anyhow::anyhow!("no coordinator at {} ({}); check --coordinator", args.coordinator, why))?;
        match tokio::time::timeout(CALL_TIMEOUT, client.status(StatusRequest {})).await {
            Ok(Ok(reply)) => Ok(reply.into_inner()),
            Ok(Err(s)) if s.code() == tonic::Code::Unauthenticated => {
                anyhow::bail!("the coordinator at {} refused: {}", args.coordinator, s.message())
            }
            Ok(Err(s)) => anyhow::bail!("no status from {} ({})", args.coordinator, status_reason(&s)),
            Err(_) => anyhow::bail!(
                "no status from {} (no answer within {} s)",
                args.coordinator,
                CALL_TIMEOUT.as_secs()
            ),
        }
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
            "inputs    {} read from the checkpoint, cache hit rate {:.1}%, thread seconds: {:.1} loading, {:.1} finding sources, {:.1} computing, {:.1} writing, {:.1} other ({:.1} of it waiting for a worker's cache); {:.1} worker seconds idle, {:.1} s closing files",
            human_bytes(io.bytes_read as u128),
            100.0 * io.hits as f64 / io.lookups as f64,
            io.load_seconds,
            io.sources_seconds,
            io.compute_seconds,
            io.write_seconds,
            io.other_seconds,
            io.wait_seconds,
            io.idle_seconds,
            io.close_seconds
        );
    }
    println!("depths    {:?}", reply.depths);
    if reply.expired_leases + reply.late_reports + reply.backups_issued > 0 {
        println!(
            "leases    {} expired, {} late reports refused, {} backup copies ({} finished first)",
            reply.expired_leases, reply.late_reports, reply.backups_issued, reply.backups_won
        );
    }
    let lost = reply.workers.iter().filter(|w| w.lost).count();
    if lost > 0 {
        println!(
            "workers   {} ({} lost: report stream broken, lease expired or silent for {} s)",
            reply.workers.len() - lost,
            lost,
            reply.lease_secs
        );
    } else {
        println!("workers   {}", reply.workers.len());
    }
    for w in &reply.workers {
        println!(
            "  #{:<3} {:<24} {:>3} cores  {:>10} memory  {:>5} tasks  {:>8.1} M evals/s  {}",
            w.worker_id,
            w.name,
            w.cores,
            human_bytes(w.memory_budget as u128),
            w.tasks_done,
            w.evaluations_per_sec / 1e6,
            if w.lost {
                format!("lost, last heard {:.0} s ago", w.idle_secs)
            } else if w.busy {
                "busy".to_string()
            } else {
                format!("idle {:.0} s", w.idle_secs)
            }
        );
    }
    Ok(())
}
