//! The coordinator server: serves a [`JobState`] over gRPC until the job
//! ends, then lets connected workers learn that before shutting down.
//! Workers in the same process call the same service without the network.

pub mod finish;
pub mod service;
pub mod state;

use crate::manifest::JOURNAL_SYNC_INTERVAL;
use cayley_proto::coordinator_server::CoordinatorServer;
use cayley_worker::client::link::{in_process_transport, Transport};
use service::{check_token, publish_end, CoordinatorService, LEASE_HOLD};
use state::{JobState, Phase};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tonic::transport::{Identity, Server, ServerTlsConfig};

/// How to serve a job.
pub struct ServeOptions {
    /// Where workers on the network connect; `None` for a job whose only
    /// workers are in this process ([`Running::in_process`]).
    pub listener: Option<TcpListener>,
    pub token: Option<String>,
    /// PEM certificate and key for TLS.
    pub tls: Option<(Vec<u8>, Vec<u8>)>,
    pub lease_secs: u32,
    /// Whether idle workers get backup copies of straggling tasks.
    pub backups: bool,
}

/// A running server.
pub struct Running {
    pub state: Arc<Mutex<JobState>>,
    phase_rx: watch::Receiver<Phase>,
    shutdown_tx: watch::Sender<bool>,
    /// Serves `listener`, when there is one.
    server: Option<tokio::task::JoinHandle<Result<(), tonic::transport::Error>>>,
    /// The service itself, for workers in this process.
    in_process: Transport,
    /// Fsyncs the journal a second after records arrive and expires
    /// leases.
    journal_clock: tokio::task::JoinHandle<()>,
    /// Wakes the lease requests held for a task (see
    /// [`CoordinatorService::changed`]).
    changed: Arc<Notify>,
}

/// Checks that `cert` and `key` (PEM) make a TLS identity the server can
/// use, as [`start`] will build it: a key that did not parse stopped
/// `serve` only once its checkpoint and result folder were made.
pub fn check_tls_identity(cert: &[u8], key: &[u8]) -> anyhow::Result<()> {
    Server::builder()
        .tls_config(ServerTlsConfig::new().identity(Identity::from_pem(cert, key)))
        .map(|_| ())
        .map_err(|e| {
            let why = std::error::Error::source(&e).map_or_else(|| e.to_string(), |s| s.to_string());
            anyhow::anyhow!(why)
        })
}

/// Starts serving `state`.
pub fn start(state: JobState, options: ServeOptions) -> anyhow::Result<Running> {
    let initial = state.phase.clone();
    let mut state = state;
    state.backups = options.backups;
    let state = Arc::new(Mutex::new(state));
    let (phase_tx, phase_rx) = watch::channel(initial);
    let phase_tx = Arc::new(phase_tx);
    let changed = Arc::new(Notify::new());
    let service = CoordinatorService {
        state: state.clone(),
        phase_tx: phase_tx.clone(),
        lease_secs: options.lease_secs,
        coordinator_id: rand::random::<u64>(),
        changed: changed.clone(),
        lease_hold: LEASE_HOLD,
    };
    let journal_clock = tokio::spawn({
        let (state, changed) = (state.clone(), changed.clone());
        async move {
            let mut clock = tokio::time::interval(JOURNAL_SYNC_INTERVAL);
            loop {
                clock.tick().await;
                let mut s = state.lock().expect("job state lock");
                s.sync_journal_if_due();
                // A task whose worker went silent goes back to the queue
                // even while nobody asks for work, and `status` shows it.
                if s.phase == Phase::Running {
                    s.expire_leases();
                }
                publish_end(&s, &phase_tx);
                drop(s);
                changed.notify_waiters();
            }
        }
    });
    let grpc = CoordinatorServer::with_interceptor(service, check_token(options.token));
    let in_process = in_process_transport(grpc.clone());
    let (shutdown_tx, mut shutdown_rx) = watch::channel(false);
    let server = match options.listener {
        None => None,
        Some(listener) => {
            let mut builder = Server::builder().http2_keepalive_interval(Some(Duration::from_secs(10)));
            if let Some((cert, key)) = &options.tls {
                let identity = Identity::from_pem(cert, key);
                builder = builder.tls_config(ServerTlsConfig::new().identity(identity))?;
            }
            // Without TCP_NODELAY a reply's trailers, written after its
            // body, wait for the client's delayed ACK: 40 ms on every short
            // call, which was most of a small job's start and a part of
            // every level.
            let incoming =
                tokio_stream::StreamExt::map(tokio_stream::wrappers::TcpListenerStream::new(listener), |stream| {
                    stream.and_then(|s| s.set_nodelay(true).map(|()| s))
                });
            let router = builder.add_service(grpc);
            Some(tokio::spawn(router.serve_with_incoming_shutdown(
                incoming,
                async move {
                    let _ = shutdown_rx.wait_for(|&stop| stop).await;
                },
            )))
        }
    };
    Ok(Running {
        state,
        phase_rx,
        shutdown_tx,
        server,
        in_process,
        journal_clock,
        changed,
    })
}

impl Running {
    /// The service as workers in this process reach it
    /// ([`cayley_worker::client::Link::in_process`]).
    pub fn in_process(&self) -> Transport {
        self.in_process.clone()
    }

    /// Waits until the job finishes or stops, or `interrupt` fires (then the
    /// job is stopped with that reason).
    pub async fn wait(&mut self, interrupt: impl std::future::Future<Output = String>) -> Phase {
        let already = self.state.lock().expect("state").phase.clone();
        if already != Phase::Running {
            return already;
        }
        tokio::select! {
            r = self.phase_rx.wait_for(|p| *p != Phase::Running) => {
                r.map(|p| p.clone()).unwrap_or(Phase::Stopped("coordinator channel closed".into()))
            }
            reason = interrupt => {
                let phase = {
                    let mut s = self.state.lock().expect("state");
                    s.stop(reason);
                    s.phase.clone()
                };
                // Held lease requests hear it now, not after their hold.
                self.changed.notify_waiters();
                phase
            }
        }
    }

    /// Gives workers `grace` to hear that the job is over, then stops
    /// serving. Every worker still alive (not lost) is waited for until it
    /// has asked for work and been told: a slow or briefly stopped worker
    /// that found the coordinator gone would otherwise retry it for its
    /// whole `--patience` and exit with an error. Workers not known yet are
    /// answered until `answer_until` (within `grace`): one started beside
    /// the coordinator may first call it after a small job has ended.
    pub async fn shutdown(
        self,
        grace: Duration,
        answer_until: Option<tokio::time::Instant>,
    ) -> anyhow::Result<Arc<Mutex<JobState>>> {
        let deadline = tokio::time::Instant::now() + grace;
        while tokio::time::Instant::now() < deadline {
            let waiting = {
                let s = self.state.lock().expect("state");
                s.workers.iter().any(|(&id, w)| !w.told_over && !s.is_lost(id))
            };
            let answering = answer_until.is_some_and(|t| tokio::time::Instant::now() < t);
            if !waiting && !answering {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.journal_clock.abort();
        let _ = self.shutdown_tx.send(true);
        if let Some(server) = self.server {
            server.await??;
        }
        Ok(self.state)
    }
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM (`kill`, a container or batch
/// system stopping the process) with the reason to stop the job: either way
/// the coordinator stops cleanly, with the manifest and journal synced and
/// the command that continues the job printed, instead of dying mid-record.
pub async fn interrupted() -> String {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => tokio::select! {
            _ = tokio::signal::ctrl_c() => "interrupted (SIGINT)".to_string(),
            _ = term.recv() => "terminated (SIGTERM)".to_string(),
        },
        // Without a SIGTERM handler the default applies: the process dies,
        // losing at most the journal's last second (see the crash model).
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            "interrupted (SIGINT)".to_string()
        }
    }
}

#[cfg(test)]
mod tests;
