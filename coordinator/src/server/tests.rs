//! Unit tests of the coordinator's state machine and service, without a network.

use super::service::CoordinatorService;
use super::state::{Clock, JobState, Phase, Reporter, Verdict};
use crate::manifest::Manifest;
use cayley_proto::coordinator_server::Coordinator;
use cayley_proto::{lease_reply, RegisterRequest, TaskDone, TaskProgress, PROTOCOL_VERSION};
use cayley_shared::files::checkpoint::{CheckpointDir, KeepLevels};
use cayley_shared::files::WriteOptions;
use cayley_shared::job::Job;
use cayley_shared::puzzle::{parse_puzzle, Metric};
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct Silent;
impl Reporter for Silent {
    fn warn(&mut self, _message: &str) {}
}

fn state(dir: &std::path::Path, lease: Duration) -> JobState {
    let job = Job::new(parse_puzzle("loopover:2x4", Metric::Mtm).unwrap(), Some(1)).unwrap();
    let manifest = Manifest::new(&job, KeepLevels::All, None, None);
    JobState::open(
        job,
        CheckpointDir::create(dir).unwrap(),
        manifest,
        lease,
        Box::new(Silent),
        WriteOptions::DURABLE,
    )
    .unwrap()
}

fn task(reply: lease_reply::Reply) -> cayley_proto::Task {
    match reply {
        lease_reply::Reply::Task(t) => t,
        other => panic!("expected a task, got {:?}", other),
    }
}

fn done(count: u64) -> TaskDone {
    TaskDone {
        stored: count,
        ..TaskDone::default()
    }
}

/// A one-core worker named `name` registering with this build's protocol.
fn register_as(name: &str) -> RegisterRequest {
    RegisterRequest {
        protocol_version: PROTOCOL_VERSION,
        worker_name: name.into(),
        cores: 1,
        memory_budget: 0,
    }
}

/// The lease request of a worker as `joined`, running nothing.
fn lease_for(joined: &cayley_proto::RegisterReply) -> cayley_proto::LeaseRequest {
    cayley_proto::LeaseRequest {
        worker_id: joined.worker_id,
        coordinator_id: joined.coordinator_id,
        running_tasks: 0,
    }
}

#[test]
fn results_without_a_matching_file_or_lease_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = state(dir.path(), Duration::from_secs(30));
    let w = s.register("w".into(), 1, 0);
    let t = task(s.lease(w));
    // No output file was written: rejected, and the task goes back to the queue.
    assert!(matches!(s.complete(w, t.lease_id, done(3)), Verdict::Rejected(_)));
    // A count larger than the shard is rejected whatever the file says.
    let t = task(s.lease(w));
    assert!(matches!(s.complete(w, t.lease_id, done(1 << 40)), Verdict::Rejected(m) if m.contains("exceeds")));
    // Another worker cannot report someone else's lease.
    let other = s.register("o".into(), 1, 0);
    let t = task(s.lease(w));
    assert!(matches!(s.complete(other, t.lease_id, done(1)), Verdict::Rejected(m) if m.contains("held by")));
    assert!(s.progress(other, t.lease_id, TaskProgress::default()).is_err());
    assert_eq!(s.phase, Phase::Running);
}

#[test]
fn expired_and_abandoned_leases_are_reissued() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = state(dir.path(), Duration::from_secs(30));
    let (clock, hands) = Clock::manual();
    s.clock = clock;
    let a = s.register("a".into(), 1, 0);
    let first = task(s.lease(a));
    // Not yet expired a moment before the deadline.
    hands.advance(Duration::from_millis(29_999));
    s.expire_leases();
    assert_eq!(s.lease_stats.expired, 0);
    hands.advance(Duration::from_millis(2));
    // The lease expired: the task is pending again and handed out anew.
    let again = task(s.lease(a));
    assert_eq!(s.lease_stats.expired, 1);
    assert_eq!((again.from_level, again.chunk), (first.from_level, first.chunk));
    assert_ne!(again.lease_id, first.lease_id);
    // A dropped stream releases the task at once.
    s.abandon(a, again.lease_id);
    let third = task(s.lease(a));
    assert_eq!(third.chunk, first.chunk);
    assert_ne!(third.lease_id, again.lease_id);
}

/// The service on `s` (coordinator id 7), lease requests held up to `hold`.
fn service(s: JobState, hold: Duration) -> CoordinatorService {
    let (tx, _rx) = tokio::sync::watch::channel(Phase::Running);
    CoordinatorService {
        state: Arc::new(Mutex::new(s)),
        phase_tx: Arc::new(tx),
        lease_secs: 30,
        coordinator_id: 7,
        changed: Arc::new(tokio::sync::Notify::new()),
        lease_hold: hold,
    }
}

/// What `worker` is answered when it asks the service for a task.
async fn ask(service: &CoordinatorService, worker: u64) -> lease_reply::Reply {
    let request = cayley_proto::LeaseRequest {
        worker_id: worker,
        coordinator_id: 7,
        running_tasks: 0,
    };
    service
        .lease(tonic::Request::new(request))
        .await
        .unwrap()
        .into_inner()
        .reply
        .unwrap()
}

/// Worker `a` holds every task of level 0; returns the service and the
/// ids of `a`, of an idle worker `b` and of one of `a`'s leases.
fn every_task_leased(dir: &std::path::Path, hold: Duration) -> (CoordinatorService, u64, u64, u64) {
    let mut s = state(dir, Duration::from_secs(30));
    let (a, b) = (s.register("a".into(), 1, 0), s.register("b".into(), 1, 0));
    let mut leased = None;
    while let lease_reply::Reply::Task(t) = s.lease(a) {
        leased = Some(t.lease_id);
    }
    (service(s, hold), a, b, leased.expect("level 0 has tasks"))
}

/// `worker`'s lease request, sent and found waiting 50 ms later.
async fn held_request(service: &CoordinatorService, worker: u64) -> tokio::task::JoinHandle<lease_reply::Reply> {
    let held = tokio::spawn({
        let service = service.clone();
        async move { ask(&service, worker).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!held.is_finished(), "nothing to hand out: the request waits");
    held
}

/// A lease request that finds nothing to hand out is held, and answered
/// with a task as soon as one comes (here a task another worker gave
/// back), not after a wait the worker would sleep through.
#[tokio::test]
async fn a_held_lease_request_gets_a_task_given_back_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    // Held for a minute: only the change can answer it within the test.
    let (service, a, b, lease) = every_task_leased(dir.path(), Duration::from_secs(60));
    let held = held_request(&service, b).await;
    let given_back = {
        let s = service.state.lock().unwrap();
        s.leases[&lease].key
    };
    service.with_state(|s| s.abandon(a, lease));
    let got = tokio::time::timeout(Duration::from_secs(10), held)
        .await
        .expect("woken by the change")
        .unwrap();
    let got = task(got);
    assert_eq!((got.from_level, got.chunk), given_back);
}

/// A held request hears that the job stopped, and one that waited its
/// whole hold for nothing is told to ask again at once.
#[tokio::test]
async fn a_held_lease_request_hears_the_end_or_is_told_to_ask_again() {
    let dir = tempfile::tempdir().unwrap();
    let (service, _, b, _) = every_task_leased(dir.path(), Duration::from_millis(20));
    assert_eq!(ask(&service, b).await, lease_reply::Reply::WaitMs(0));

    let dir = tempfile::tempdir().unwrap();
    let (service, _, b, _) = every_task_leased(dir.path(), Duration::from_secs(60));
    let held = held_request(&service, b).await;
    service.with_state(|s| s.stop("stopped by the test".into()));
    match tokio::time::timeout(Duration::from_secs(10), held)
        .await
        .unwrap()
        .unwrap()
    {
        lease_reply::Reply::Over(over) => assert!(!over.finished && over.reason.contains("stopped by the test")),
        other => panic!("expected the end of the job, got {other:?}"),
    }
}

#[tokio::test]
async fn a_worker_of_another_protocol_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = state(dir.path(), Duration::from_secs(30));
    let service = service(s, Duration::from_millis(100));
    let request = |version| {
        tonic::Request::new(RegisterRequest {
            protocol_version: version,
            worker_name: "w".into(),
            cores: 1,
            memory_budget: 0,
        })
    };
    let err = service.register(request(PROTOCOL_VERSION + 1)).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::FailedPrecondition);
    assert!(err.message().contains("protocol version"), "{}", err.message());
    let ok = service.register(request(PROTOCOL_VERSION)).await.unwrap().into_inner();
    assert_eq!(ok.job.unwrap().puzzle, "loopover:2x4");
}

#[test]
fn the_token_check_refuses_missing_and_wrong_tokens() {
    let check = super::service::check_token(Some("secret".into()));
    assert_eq!(
        check(tonic::Request::new(())).unwrap_err().code(),
        tonic::Code::Unauthenticated
    );
    let mut wrong = tonic::Request::new(());
    wrong
        .metadata_mut()
        .insert("authorization", "Bearer nope".parse().unwrap());
    assert_eq!(check(wrong).unwrap_err().code(), tonic::Code::Unauthenticated);
    let mut right = tonic::Request::new(());
    right
        .metadata_mut()
        .insert("authorization", "Bearer secret".parse().unwrap());
    assert!(check(right).is_ok());
}

/// The route of the workers `cayley run` embeds: the service called in
/// this process, token checked, and a report stream that ends without a
/// result releases its task at once, as a broken connection does.
#[tokio::test]
async fn workers_in_this_process_reach_the_service_without_a_network() {
    use cayley_proto::{task_update, TaskUpdate};
    use cayley_worker::client::Link;
    let dir = tempfile::tempdir().unwrap();
    let options = super::ServeOptions {
        listener: None,
        token: Some("secret".into()),
        tls: None,
        lease_secs: 30,
        backups: false,
    };
    let running = super::start(state(dir.path(), Duration::from_secs(30)), options).unwrap();
    let register = register_as("local");
    let mut wrong = Link::in_process(running.in_process(), Some("nope"))
        .unwrap()
        .connect_once()
        .await
        .unwrap();
    let refused = wrong.register(register.clone()).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);

    let mut client = Link::in_process(running.in_process(), Some("secret"))
        .unwrap()
        .connect_once()
        .await
        .unwrap();
    let joined = client.register(register).await.unwrap().into_inner();
    assert_eq!(joined.job.as_ref().unwrap().puzzle, "loopover:2x4");
    let lease = lease_for(&joined);
    let reply = client.lease(lease).await.unwrap().into_inner().reply.unwrap();
    let leased = task(reply);
    assert_eq!(running.state.lock().unwrap().leases.len(), 1);

    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let progress = TaskUpdate {
        worker_id: joined.worker_id,
        lease_id: leased.lease_id,
        coordinator_id: joined.coordinator_id,
        update: Some(task_update::Update::Progress(TaskProgress::default())),
    };
    tx.send(progress).await.unwrap();
    drop(tx);
    let ended = client
        .report(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap_err();
    assert_eq!(ended.code(), tonic::Code::Cancelled);
    let s = running.state.lock().unwrap();
    assert!(s.leases.is_empty(), "the task's lease was released");
    assert!(
        s.pending.contains(&(leased.from_level, leased.chunk)),
        "and the task is queued again"
    );
}

/// A worker whose chunk was recorded first (here by the coordinator's
/// record of it as gaining nothing, as another worker's sparse map says)
/// hears so at its next progress message: the reply says the lease was
/// superseded, which the worker takes quietly, while a report on a lease
/// the coordinator never issued is a rejection. Two in-process workers met
/// the first case in most runs of `cayley run loopover:3x3 --workers 2 -q`,
/// which then printed four warnings under a perfect table.
#[tokio::test]
async fn a_lease_ended_by_its_chunk_recorded_first_is_superseded_not_rejected() {
    use cayley_proto::{task_update, TaskUpdate};
    use cayley_worker::client::Link;
    let dir = tempfile::tempdir().unwrap();
    let options = super::ServeOptions {
        listener: None,
        token: None,
        tls: None,
        lease_secs: 30,
        backups: false,
    };
    let running = super::start(state(dir.path(), Duration::from_secs(30)), options).unwrap();
    let mut client = Link::in_process(running.in_process(), None)
        .unwrap()
        .connect_once()
        .await
        .unwrap();
    let joined = client.register(register_as("b")).await.unwrap().into_inner();
    let lease = lease_for(&joined);
    let leased = task(client.lease(lease).await.unwrap().into_inner().reply.unwrap());
    running
        .state
        .lock()
        .unwrap()
        .record_empties_now(leased.from_level, &[leased.chunk]);
    let progress_on = |lease_id| {
        let update = TaskUpdate {
            worker_id: joined.worker_id,
            lease_id,
            coordinator_id: joined.coordinator_id,
            update: Some(task_update::Update::Progress(TaskProgress::default())),
        };
        let stream = tokio_stream::iter(vec![update]);
        let mut client = client.clone();
        async move { client.report(stream).await.unwrap().into_inner() }
    };
    let ended = progress_on(leased.lease_id).await;
    assert!(ended.superseded && !ended.accepted, "{ended:?}");
    assert!(ended.message.contains("recorded first"), "{}", ended.message);
    let unknown = progress_on(leased.lease_id + 1000).await;
    assert!(!unknown.superseded && !unknown.accepted, "{unknown:?}");
}

/// A worker started beside the coordinator may first call it after a small
/// job is over: until `answer_until` it is still answered, and told the
/// job is finished, where it would have found no coordinator.
#[tokio::test]
async fn a_worker_calling_just_after_the_end_hears_the_job_is_over() {
    use cayley_proto::coordinator_client::CoordinatorClient;
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let options = super::ServeOptions {
        listener: Some(listener),
        token: None,
        tls: None,
        lease_secs: 30,
        backups: false,
    };
    let mut finished = state(dir.path(), Duration::from_secs(30));
    finished.phase = Phase::Finished;
    let running = super::start(finished, options).unwrap();
    let started = tokio::time::Instant::now();
    let answer_until = started + Duration::from_millis(1500);
    let stopping = tokio::spawn(running.shutdown(Duration::from_secs(10), Some(answer_until)));

    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut late = CoordinatorClient::connect(format!("http://{}", address)).await.unwrap();
    let joined = late.register(register_as("late")).await.unwrap().into_inner();
    let lease = lease_for(&joined);
    match late.lease(lease).await.unwrap().into_inner().reply.unwrap() {
        lease_reply::Reply::Over(over) => assert!(over.finished, "{:?}", over),
        other => panic!("expected the job to be over, got {:?}", other),
    }
    stopping.await.unwrap().unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "served until answer_until"
    );
    assert!(
        CoordinatorClient::connect(format!("http://{}", address)).await.is_err(),
        "and no longer"
    );
}
