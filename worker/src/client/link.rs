//! Reaching the coordinator: one endpoint, retried with backoff for
//! `--patience` whenever the coordinator cannot be reached (at start or
//! mid-run), saying each time why and for how long it will keep trying.
//! The workers `cayley run` embeds call the coordinator's service in the
//! same process instead ([`Link::in_process`]): the same messages, encoded
//! and checked as over the network, without HTTP/2 or TCP.

use super::Auth;
use cayley_proto::coordinator_client::CoordinatorClient;
use std::error::Error;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tonic::body::Body;
use tonic::codegen::http;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};
use tower::util::BoxCloneSyncService;
use tower::ServiceExt;

/// What a client's calls go through: a connection to the coordinator, or
/// its service in this process.
pub type Transport = BoxCloneSyncService<http::Request<Body>, http::Response<Body>, TransportError>;

/// Why a [`Transport`] failed a call: the connection's error, or the
/// in-process service's. A named type rather than a bare
/// [`tower::BoxError`], whose conversion into tonic's error the compiler
/// cannot prove for the futures that are spawned with a client.
#[derive(Debug)]
pub struct TransportError(tower::BoxError);

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Error for TransportError {
    /// The error itself, so that tonic finds a `Status` or a connection
    /// error in it as it would without the wrapper.
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.0)
    }
}

/// A connected client with the cluster token on every call.
pub type Client = CoordinatorClient<InterceptedService<Transport, Auth>>;

/// `service` (the coordinator's gRPC service, as a server serves it) as a
/// [`Transport`]: calls through it reach the service directly.
pub fn in_process_transport<S, B>(service: S) -> Transport
where
    S: tower::Service<http::Request<Body>, Response = http::Response<B>> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
    S::Error: Into<tower::BoxError>,
    B: tonic::codegen::Body<Data = tonic::codegen::Bytes> + Send + 'static,
    B::Error: Into<tower::BoxError>,
{
    Transport::new(
        service
            .map_response(|r| r.map(Body::new))
            .map_err(|e| TransportError(e.into())),
    )
}

/// Where the coordinator is.
#[derive(Clone)]
enum Route {
    Network(Box<Endpoint>),
    InProcess(Transport),
}

/// Longest a unary call (register, lease, status) may take. The
/// coordinator answers them from memory in microseconds; one that takes
/// this long is behind a partition, and waiting for TCP to give up would
/// take minutes.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// HTTP/2 pings on an open connection: a coordinator that stops answering
/// them (a cut link, a dead machine) breaks the connection, and with it a
/// task's report stream, within interval + timeout.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// First and longest wait between two attempts to connect.
const FIRST_RETRY: Duration = Duration::from_millis(200);
const LONGEST_RETRY: Duration = Duration::from_secs(5);
/// How often a worker still retrying says so.
const RETRY_NOTICE: Duration = Duration::from_secs(10);

/// The line that begins a certificate in a PEM file.
const CERTIFICATE_PEM: &[u8] = b"-----BEGIN CERTIFICATE-----";

/// Where the coordinator is and how to talk to it.
#[derive(Clone)]
pub struct Link {
    route: Route,
    auth: Auth,
    /// The URL as given, for messages.
    pub url: String,
    /// How long to keep retrying an unreachable coordinator.
    pub patience: Duration,
}

impl Link {
    /// Checks the URL, the CA file and the token; connects to nothing yet.
    pub fn new(url: &str, token: Option<&str>, tls_ca: Option<&PathBuf>, patience: Duration) -> anyhow::Result<Link> {
        let mut endpoint = Endpoint::from_shared(url.to_string())
            .map_err(|e| anyhow::anyhow!("bad coordinator URL '{}': {}", url, e))?
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
            .keep_alive_timeout(KEEPALIVE_TIMEOUT)
            .keep_alive_while_idle(true);
        // Refused here, not met as a connection that fails for `patience`
        // seconds: an https:// URL without a CA retried for five minutes
        // with "Connecting to HTTPS without TLS enabled", and a CA given
        // with an http:// URL was ignored.
        let https = endpoint
            .uri()
            .scheme_str()
            .is_some_and(|s| s.eq_ignore_ascii_case("https"));
        match (tls_ca, https) {
            (None, true) => anyhow::bail!(
                "the coordinator at {} speaks TLS: give --tls-ca FILE, the CA certificate (PEM) that signed its --tls-cert",
                url
            ),
            (Some(ca), false) => anyhow::bail!(
                "--tls-ca {} is for a coordinator that speaks TLS: write its URL as https://…, or leave --tls-ca out",
                ca.display()
            ),
            (None, false) => {}
            (Some(ca), true) => {
                let pem = std::fs::read(ca)
                    .map_err(|e| anyhow::anyhow!("cannot read CA certificate {}: {}", ca.display(), e))?;
                if !pem.windows(CERTIFICATE_PEM.len()).any(|w| w == CERTIFICATE_PEM) {
                    anyhow::bail!(
                        "{} is not a PEM certificate (no '-----BEGIN CERTIFICATE-----' line): give the CA certificate that signed the coordinator's --tls-cert",
                        ca.display()
                    );
                }
                endpoint = endpoint.tls_config(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem)))?;
            }
        }
        Ok(Link {
            route: Route::Network(Box::new(endpoint)),
            auth: Auth::new(token)?,
            url: url.to_string(),
            patience,
        })
    }

    /// The coordinator's service in this process, reached through
    /// `transport` ([`in_process_transport`]). On the 4×4 Loopover to
    /// depth 8 at 2 threads, HTTP/2 and loopback TCP took about 0.25 of
    /// 24 CPU seconds, all of it from the computing threads' cores.
    pub fn in_process(transport: Transport, token: Option<&str>) -> anyhow::Result<Link> {
        Ok(Link {
            route: Route::InProcess(transport),
            auth: Auth::new(token)?,
            url: "this process".to_string(),
            patience: Duration::ZERO,
        })
    }

    /// One attempt to connect; the error says why in a few words
    /// ("connection refused", "host name not found", "TLS: …").
    pub async fn connect_once(&self) -> Result<Client, String> {
        let transport = match &self.route {
            Route::InProcess(transport) => transport.clone(),
            Route::Network(endpoint) => match endpoint.connect().await {
                Ok(channel) => Transport::new(channel.map_err(|e| TransportError(e.into()))),
                Err(e) => return Err(reason(&e)),
            },
        };
        Ok(CoordinatorClient::with_interceptor(transport, self.auth.clone()))
    }

    /// Connects, retrying with backoff until `patience` has passed since
    /// `since` (the start, or the moment the coordinator was lost). Says at
    /// once, and every few seconds after, why it is retrying and how long
    /// it will go on.
    pub async fn connect(&self, since: Instant) -> anyhow::Result<Client> {
        let deadline = since + self.patience;
        let mut wait = FIRST_RETRY;
        let mut last_notice: Option<(Instant, String)> = None;
        loop {
            let why = match self.connect_once().await {
                Ok(client) => return Ok(client),
                Err(why) => why,
            };
            let now = Instant::now();
            if now >= deadline {
                anyhow::bail!(
                    "no coordinator at {} ({}); gave up after {} s (--patience)",
                    self.url,
                    why,
                    self.patience.as_secs()
                );
            }
            let due = last_notice
                .as_ref()
                .is_none_or(|(at, said)| *said != why || at.elapsed() >= RETRY_NOTICE);
            if due {
                tracing::warn!(
                    "no coordinator at {} ({}); retrying for {} s more",
                    self.url,
                    why,
                    (deadline - now).as_secs()
                );
                last_notice = Some((now, why));
            }
            tokio::time::sleep(wait.min(deadline - now)).await;
            wait = (wait * 2).min(LONGEST_RETRY);
        }
    }
}

/// Why a connection or a call failed, in a few words: the innermost
/// cause that says something (the OS's "connection refused", a DNS or TLS
/// failure), not tonic's "transport error".
pub fn reason(err: &(dyn Error + 'static)) -> String {
    let mut causes = Vec::new();
    let mut next: Option<&(dyn Error + 'static)> = Some(err);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => return "connection refused".into(),
                std::io::ErrorKind::ConnectionReset => return "connection reset".into(),
                std::io::ErrorKind::TimedOut => return "timed out".into(),
                _ => {}
            }
        }
        causes.push(e.to_string());
        next = e.source();
    }
    let all = causes.join(": ").to_lowercase();
    if all.contains("dns error") || all.contains("failed to lookup address") {
        return "host name not found".into();
    }
    if all.contains("timed out") || all.contains("deadline has elapsed") {
        return "timed out".into();
    }
    if all.contains("certificate") || all.contains("tls") || all.contains("handshake") {
        let detail = causes.last().cloned().unwrap_or_default();
        return format!("TLS: {}", detail);
    }
    if all.contains("unreachable") {
        return "network unreachable".into();
    }
    causes.pop().unwrap_or_else(|| "unknown error".into())
}

/// Why a call failed: the transport's reason when there is one, else the
/// status message.
pub fn status_reason(status: &tonic::Status) -> String {
    match status.source() {
        Some(source) => reason(source),
        None if status.message().is_empty() => format!("{:?}", status.code()),
        None => status.message().to_string(),
    }
}
