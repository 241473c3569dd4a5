#!/bin/bash
# Deploy checks: runs deploy/ for real on this machine and checks the tables
# against tests/data (published values, never an earlier run of cayley).
#
#   deploy/ci-check.sh                 # everything (what .ci/run does)
#   deploy/ci-check.sh slurm container # some parts: slurm container compose kubernetes
#
# - slurm: a one-node Slurm cluster from Debian's packages (slurmctld, slurmd,
#   munged, started here without systemd); deploy/slurm/cayley.sbatch runs
#   loopover:2x5 (published table), loopover:2x6 uninterrupted, and
#   loopover:2x6 under `--time=1`: Slurm's time-limit warning stops the first
#   run, the job requeues itself and a later run finishes it with the same
#   table.
# - container: deploy/Dockerfile built offline (podman, no registry) from the
#   release binaries; `cayley run` in it (--network none), then a coordinator
#   and a worker container (--network host, 127.0.0.1 only), interrupted and
#   continued by cayley-serve.
# - compose: deploy/docker-compose.yml with podman-compose: coordinator + 2
#   workers, host networking.
# - kubernetes: deploy/kubernetes/cayley.yaml validated offline against the
#   Kubernetes API schemas (kubernetes-validate, strict) and for consistency
#   (deploy/kubernetes/check.py); the containers' exact commands from it run
#   in the image on loopback. No Kubernetes cluster is started.
#
# Needs root (apt-get, the Slurm daemons, podman); as another user it prints
# that it skipped and exits 0. Uses target/release/{cayley,cayley-worker}
# (built by `cargo test --workspace --release`; built here if missing).
# Everything it starts is stopped at the end, also on failure.
# DEPLOY_CHECK_KEEP=1 keeps the work directory. The PyPI tools live in a
# virtualenv kept between runs (DEPLOY_CHECK_VENV, default
# /var/cache/cayley-deploy-check/venv).
set -euo pipefail
export LC_ALL=C
REPO=$(cd "$(dirname "$0")/.." && pwd)
T_START=$(date +%s.%N)

if [ "$(id -u)" != 0 ]; then
  echo "deploy checks: SKIPPED - they need root (apt-get install, slurmctld/slurmd/munged, podman);"
  echo "  nothing of deploy/ was exercised. Run deploy/ci-check.sh as root to run them."
  exit 0
fi

PARTS=("$@")
[ ${#PARTS[@]} -gt 0 ] || PARTS=(slurm container compose kubernetes)
for p in "${PARTS[@]}"; do
  case $p in slurm | container | compose | kubernetes) ;; *) echo "unknown part '$p'" >&2; exit 2 ;; esac
done
want() { local p; for p in "${PARTS[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
need_containers() { want container || want compose || want kubernetes; }

WORK=$(mktemp -d /tmp/cayley-deploy-check.XXXXXX)
chmod 0755 "$WORK"   # slurmctld (user slurm) and the image's user traverse it
BIN=$REPO/target/release
IMAGE=localhost/cayley:latest
VENV=${DEPLOY_CHECK_VENV:-/var/cache/cayley-deploy-check/venv}
PASSED=0
FAILED=0
SUMMARY=()

log() { echo "[deploy $(date +%T)] $*"; }
elapsed() { printf '%.1f' "$(echo "$(date +%s.%N) - $1" | bc)"; }

# ---------------------------------------------------------------- cleanup
MUNGE_PID=
CTLD_PID=
SLURMD_PID=
STOPPED=
# Stops everything this script started (idempotent).
stop_all() {
  [ -z "$STOPPED" ] || return 0
  STOPPED=1
  set +e
  if [ -n "$CTLD_PID" ]; then
    slurm_stop
    log "stopped slurmd and slurmctld"
  fi
  if [ -n "$MUNGE_PID" ]; then
    kill "$MUNGE_PID" 2>/dev/null
    wait "$MUNGE_PID" 2>/dev/null
    log "stopped munged"
  fi
  if command -v podman >/dev/null; then
    podman ps -a -q --filter label=cayley-deploy-check | xargs -r podman rm -f >/dev/null 2>&1
    podman ps -a -q --filter label=com.docker.compose.project=cayley-deploy-check | xargs -r podman rm -f >/dev/null 2>&1
    # docs/cluster.md's containers, run as written, carry no label.
    podman ps -a -q --filter ancestor="$IMAGE" | xargs -r podman rm -f >/dev/null 2>&1
    podman rmi -f "$IMAGE" >/dev/null 2>&1 && log "removed the containers and $IMAGE"
  fi
  if [ "$FAILED" != 0 ] || [ "${DEPLOY_CHECK_KEEP:-}" = 1 ]; then
    log "work directory kept: $WORK"
  else
    rm -rf "$WORK"
  fi
  set -e
}
trap 'rc=$?; stop_all; exit $rc' EXIT
# A check runs in a background subshell (CHECK_PID) so that `wait` returns at
# once on SIGINT/SIGTERM: then end the check and clean up.
CHECK_PID=
on_signal() {
  FAILED=$((FAILED + 1))
  log "interrupted; stopping"
  [ -z "$CHECK_PID" ] || kill "$CHECK_PID" 2>/dev/null || true
  exit 130
}
trap on_signal INT TERM
on_err() { trap 'FAILED=$((FAILED + 1)); log "FAIL: a set-up command failed (line $LINENO)"' ERR; }
on_err

# Runs one check in a subshell with errexit; prints PASS/FAIL and its time.
check() {
  local name=$1 t0 rc
  shift
  t0=$(date +%s.%N)
  log "---- $name"
  trap - ERR
  set +e
  (set -e; "$@") &
  CHECK_PID=$!
  wait "$CHECK_PID"
  rc=$?
  CHECK_PID=
  set -e
  on_err
  if [ "$rc" = 0 ]; then
    PASSED=$((PASSED + 1))
    SUMMARY+=("PASS $(printf '%6s' "$(elapsed "$t0")") s  $name")
    log "PASS $name ($(elapsed "$t0") s)"
  else
    FAILED=$((FAILED + 1))
    SUMMARY+=("FAIL $(printf '%6s' "$(elapsed "$t0")") s  $name")
    log "FAIL $name"
    finish
  fi
}

finish() {
  stop_all
  echo
  echo "not exercised here: a Kubernetes cluster (none can run offline), Docker and docker compose"
  echo "(podman and podman-compose ran the same files), Slurm across several machines and a real shared"
  echo "filesystem (one node, local disk)."
  echo "deploy checks (${PARTS[*]}) in $(elapsed "$T_START") s:"
  printf '  %s\n' "${SUMMARY[@]}"
  echo "deploy: $PASSED passed, $FAILED failed"
  [ "$FAILED" = 0 ] || exit 1
}

fail() { echo "FAILED: $*" >&2; return 1; }

# The published depth table of a Loopover MTM board, as "depth,count" lines.
published_rows() {
  local counts
  counts=$(grep "^$1," "$REPO/tests/data/loopover-mtm.csv" | cut -d, -f2)
  [ -n "$counts" ] || { echo "no published row for $1" >&2; return 1; }
  echo "depth,count"
  echo "$counts" | tr ' ' '\n' | awk '{ print NR - 1 "," $1 }'
}
expect_published() { # BOARD DEPTHS_CSV
  diff <(published_rows "$1") "$2" >/dev/null || {
    diff <(published_rows "$1") "$2" >&2
    fail "$2 differs from tests/data/loopover-mtm.csv ($1)"
  }
  echo "  $2 = tests/data/loopover-mtm.csv row $1 ($(($(wc -l < "$2") - 2)) levels)"
}

free_port() {
  local p
  for _ in $(seq 100); do
    p=$((17000 + RANDOM % 3000))
    (echo > "/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  return 1
}

# ---------------------------------------------------------------- set-up
log "deploy checks: ${PARTS[*]} (work directory $WORK)"
T_SETUP=$(date +%s.%N)
PKGS=()
if want slurm; then
  command -v slurmctld >/dev/null || PKGS+=(slurm-wlm)
  command -v munged >/dev/null || PKGS+=(munge)
fi
if need_containers; then
  command -v podman >/dev/null || PKGS+=(podman)
  command -v runc >/dev/null || PKGS+=(runc)
  [ -x /bin/busybox ] && /bin/busybox --list | grep -x sh >/dev/null || PKGS+=(busybox-static)
fi
command -v bc >/dev/null || PKGS+=(bc)
if { want compose || want kubernetes; } && ! python3 -m venv --help >/dev/null 2>&1; then
  PKGS+=(python3 python3-venv)
fi
if [ ${#PKGS[@]} -gt 0 ]; then
  log "apt-get install ${PKGS[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${PKGS[@]}" >/dev/null
fi
if [ ! -x "$BIN/cayley" ] || [ ! -x "$BIN/cayley-worker" ]; then
  log "building the release binaries"
  (cd "$REPO" && cargo build --release -p cayley-coordinator -p cayley-worker)
fi
log "binaries: $("$BIN/cayley" --version), $("$BIN/cayley-worker" --version) in $BIN"
if want compose || want kubernetes; then
  # Kept between runs (deleting its ~20,000 files costs a minute on a slow
  # disk); rebuilt when the pinned versions change.
  PIP_PKGS="podman-compose==1.6.0 kubernetes-validate==1.37.0"
  if [ "$(cat "$VENV/.cayley-pins" 2>/dev/null)" != "$PIP_PKGS" ]; then
    log "pip install $PIP_PKGS (into $VENV)"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    # shellcheck disable=SC2086
    "$VENV/bin/pip" install -q --disable-pip-version-check $PIP_PKGS
    echo "$PIP_PKGS" > "$VENV/.cayley-pins"
  else
    log "reusing $VENV ($PIP_PKGS)"
  fi
fi
if need_containers; then
  # runc, not crun (crun 1.8 refuses this machine's hybrid cgroups); the
  # default rlimits need CAP_SYS_RESOURCE, which we may not have.
  cat > "$WORK/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=32768:32768"]
[engine]
runtime = "runc"
EOF
  export CONTAINERS_CONF=$WORK/containers.conf
fi
SUMMARY+=("     $(printf '%6s' "$(elapsed "$T_SETUP")") s  set-up (packages: ${PKGS[*]:-none needed})")

# ================================================================ Slurm
SLURM=$WORK/slurm
SLURM_RUN=

munge_up() {
  # reuse a running munged, otherwise start one in the foreground
  if ! (munge -n | unmunge) >/dev/null 2>&1; then
    if [ ! -s /etc/munge/munge.key ]; then
      mungekey --create --keyfile=/etc/munge/munge.key
      chown munge:munge /etc/munge/munge.key
      chmod 0400 /etc/munge/munge.key
    fi
    install -d -o munge -g munge -m 0755 /run/munge
    setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --foreground 2> "$WORK/munged.log" &
    MUNGE_PID=$!
    for _ in $(seq 100); do (munge -n | unmunge) >/dev/null 2>&1 && break; sleep 0.1; done
  fi
  (munge -n | unmunge) | grep 'STATUS: *Success' >/dev/null || { echo "munge does not work" >&2; return 1; }
}

# Starts slurmctld and slurmd on this host: NODES=1 is one node "localhost"
# with the real CPUs and memory; NODES=2 is two slurmd's (n1, n2, one CPU
# each) on this host, for a job that spans two nodes.
slurm_start() {
  local nodes=$1 conf_nodes names
  SLURM_RUN=$SLURM/cluster-$nodes
  mkdir -p "$SLURM_RUN"
  install -d -o slurm -g slurm "$SLURM_RUN/state"
  if [ "$nodes" = 1 ]; then
    conf_nodes=$(slurmd -C | sed -n -E '1s/^NodeName=[^ ]+/NodeName=localhost NodeAddr=127.0.0.1/p')
    names=localhost
  else
    local mem
    mem=$(($(slurmd -C | sed -n -E '1s/.*RealMemory=([0-9]+).*/\1/p') / 2))
    conf_nodes="NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=16821 CPUs=1 RealMemory=$mem
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=16822 CPUs=1 RealMemory=$mem"
    names="n1 n2"
  fi
  export SLURM_CONF=$SLURM_RUN/slurm.conf
  # Own ports, files and state: nothing of another Slurm set-up is touched.
  # cred_expire (how long a requeued job waits, default 120 s) and
  # sched_interval are shortened to keep the test quick; debug2 logs each
  # time-limit pass, which the time-limit test uses to pick its moment.
  cat > "$SLURM_CONF" <<EOF
ClusterName=cayleyci
SlurmctldHost=localhost
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=cred_expire=5
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=5
SlurmctldPidFile=$SLURM_RUN/slurmctld.pid
SlurmdPidFile=$SLURM_RUN/slurmd-%n.pid
StateSaveLocation=$SLURM_RUN/state
SlurmdSpoolDir=$SLURM_RUN/spool-%n
SlurmctldLogFile=$SLURM_RUN/slurmctld.log
SlurmctldDebug=debug2
SlurmdLogFile=$SLURM_RUN/slurmd-%n.log
$conf_nodes
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  /usr/sbin/slurmctld -D -i -f "$SLURM_CONF" > "$SLURM_RUN/slurmctld.stderr" 2>&1 &
  CTLD_PID=$!
  local n
  for n in $names; do
    mkdir -p "$SLURM_RUN/spool-$n"
    /usr/sbin/slurmd -D -N "$n" -f "$SLURM_CONF" > "$SLURM_RUN/slurmd-$n.stderr" 2>&1 &
    SLURMD_PID="$SLURMD_PID $!"
  done
  for _ in $(seq 200); do
    [ "$(sinfo -h -o '%t' 2>/dev/null | sort -u)" = idle ] && break
    sleep 0.25
  done
  [ "$(sinfo -h -o '%t' 2>/dev/null | sort -u)" = idle ] || {
    tail -20 "$SLURM_RUN"/*.log >&2
    echo "the Slurm nodes did not come up" >&2
    return 1
  }
  log "Slurm $(sinfo -V | cut -d' ' -f2) up: $(sinfo -h -N -o '%N %c CPUs %m MB %t' | paste -sd ';')"
}

# Ends the jobs first (slurmd waits for its job steps), then the daemons.
slurm_stop() {
  local pid
  scancel --quiet --user=root 2>/dev/null || true
  for _ in $(seq 120); do
    squeue -h 2>/dev/null | grep . >/dev/null || break
    sleep 0.25
  done
  for pid in $SLURMD_PID $CTLD_PID; do kill "$pid" 2>/dev/null || true; done
  for pid in $SLURMD_PID $CTLD_PID; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  SLURMD_PID=
  CTLD_PID=
}

# Submits deploy/slurm/cayley.sbatch from DIR and waits for the job to end.
# Usage: submit DIR [sbatch options] -- PUZZLE [serve options]; prints the job id.
submit() {
  local dir=$1 jid opts=()
  shift
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  mkdir -p "$dir"
  jid=$(CAYLEY_BIN=$BIN sbatch --parsable --chdir="$dir" "${opts[@]}" "$REPO/deploy/slurm/cayley.sbatch" "$@")
  echo "$jid"
}
wait_job() { # JOBID TIMEOUT_S
  local t0=$SECONDS
  while squeue -h -j "$1" 2>/dev/null | grep . >/dev/null; do
    [ $((SECONDS - t0)) -lt "$2" ] || { scancel "$1"; echo "job $1 still running after $2 s; cancelled" >&2; return 1; }
    sleep 0.25
  done
}
job_field() { scontrol show job "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k && !n++ { print $2 }'; }
show_job_output() { echo "---- output of job $1:" >&2; grep -vE '^( *[0-9]| *$|#|solve:)' "$2" >&2 || true; }

slurm_published_2x5() {
  local dir=$SLURM/jobs/2x5 jid
  jid=$(submit "$dir" -- loopover:2x5)
  wait_job "$jid" 300
  local out=$dir/cayley-$jid.out
  [ "$(job_field "$jid" JobState)" = COMPLETED ] || { show_job_output "$jid" "$out"; fail "job $jid ended $(job_field "$jid" JobState)"; }
  grep -q 'listening on 127.0.0.1:' "$out" || fail "the coordinator did not listen on 127.0.0.1"
  expect_published 2x5 "$dir/cayley-loopover-2x5/out/depths.csv"
  echo "  job $jid: coordinator and worker steps wrote $(grep -c '^depth ' "$out") levels"
}

# Independent facts about loopover:2x6 from tests/data/published.md: the group
# is S_12 (R·C even), so 12! states, and the diameter is 14 (the published
# table of tests/data/loopover-mtm.csv).
check_2x6_facts() { # RESULT_DIR
  local states diameter want_d
  want_d=$(grep -oE '2×6 = [0-9]+' "$REPO/tests/data/published.md" | grep -oE '[0-9]+$')
  [ -n "$want_d" ] || fail "no 2×6 diameter in tests/data/published.md"
  states=$(awk -F, 'NR > 1 { s += $2 } END { print s }' "$1/depths.csv")
  diameter=$(($(wc -l < "$1/depths.csv") - 2))
  [ "$states" = 479001600 ] || fail "2x6: $states states, not 12! = 479001600"
  [ "$diameter" = "$want_d" ] || fail "2x6: diameter $diameter, published $want_d"
  grep -q '"complete": true' "$1/result.json" || fail "2x6: result.json not complete"
  echo "  $1: 479001600 states = 12!, diameter $diameter = tests/data/published.md"
}

slurm_2x6_uninterrupted() {
  local dir=$SLURM/jobs/2x6-plain jid
  jid=$(submit "$dir" -- loopover:2x6 --no-symmetry)
  wait_job "$jid" 900
  local out=$dir/cayley-$jid.out
  [ "$(job_field "$jid" JobState)" = COMPLETED ] || { show_job_output "$jid" "$out"; fail "job $jid ended $(job_field "$jid" JobState)"; }
  [ "$(job_field "$jid" Restarts)" = 0 ] || fail "job $jid was requeued"
  check_2x6_facts "$dir/cayley-loopover-2x6-no-symmetry/out"
}

# The next pass of slurmctld's time-limit check (every 30 s), in epoch seconds.
next_limit_pass() {
  local last
  for _ in $(seq 140); do
    last=$(grep 'Testing job time limits' "$SLURM_RUN/slurmctld.log" | tail -n 1 | sed -E 's/^\[([^]]+)\].*/\1/')
    [ -n "$last" ] && break
    sleep 0.25
  done
  [ -n "$last" ] || { echo "slurmctld logged no time-limit pass" >&2; return 1; }
  local t now
  t=$(date -d "$last" +%s.%N)
  now=$(date +%s.%N)
  # the first pass at least 12 s from now
  while [ "$(echo "$t < $now + 12" | bc)" = 1 ]; do t=$(echo "$t + 30" | bc); done
  echo "$t"
}

slurm_time_limit() {
  local dir=$SLURM/jobs/2x6-limit jid pass
  # slurmctld checks time limits every 30 s and sends --signal's warning at
  # the first check after it is due: with --time=1 and a lead of 55 s that is
  # the first check after the job starts. Submit 6 s before a check, so the
  # warning comes about 5 s into the job, in the middle of loopover:2x6 run
  # without symmetry reduction on one worker thread (about 12 s on the 2-core
  # VM; with both threads it took 6 s on 2026-11-25 and ended before the
  # warning).
  pass=$(next_limit_pass)
  sleep "$(echo "$pass - 6 - $(date +%s.%N)" | bc)"
  jid=$(CAYLEY_WORKER_THREADS=1 submit "$dir" --time=1 --signal=B:USR1@55 -- loopover:2x6 --no-symmetry)
  echo "  job $jid submitted with --time=1 --signal=B:USR1@55, $(printf '%.1f' "$(echo "$pass - $(date +%s.%N)" | bc)") s before a time-limit pass"
  wait_job "$jid" 900
  local out=$dir/cayley-$jid.out
  show_job_output "$jid" "$out" 2>&1 | sed 's/^/    /'
  [ "$(job_field "$jid" JobState)" = COMPLETED ] || fail "job $jid ended $(job_field "$jid" JobState)"
  [ "$(job_field "$jid" TimeLimit)" = 00:01:00 ] || fail "job $jid has time limit $(job_field "$jid" TimeLimit)"
  local restarts
  restarts=$(job_field "$jid" Restarts)
  [ "$restarts" -ge 1 ] || fail "job $jid was never interrupted: the first run finished before the time-limit warning (it started at $(grep -m 1 -oE '[0-9:]{8} run 1 of job' "$out" | cut -c1-8), the pass was due at $(date -d "@$pass" +%T))"
  grep -q 'SIGUSR1: the time limit is near' "$out" || fail "no time-limit warning in $out"
  ! grep -q 'DUE TO TIME LIMIT' "$out" || fail "a run was killed by the time limit instead of stopping before it"
  # the first run stopped in the middle of the job ...
  local first mark
  mark=$(grep -m 1 'stopped before the time limit; checkpoint: ' "$out" | sed 's/.*checkpoint: //')
  first=$(echo "$mark" | grep -oE 'L[0-9]{4}' || true)
  [ -n "$first" ] || fail "the first run did not stop cleanly"
  first=$((10#${first#L}))
  [ "$first" -lt 14 ] || fail "the first run stopped only after the last level ($mark)"
  # ... and the next one continued it instead of starting over
  grep -q 'run 2 of job' "$out" || fail "no second run of job $jid"
  sed -n '/run 2 of job/,$p' "$out" | grep -- '--resume$' >/dev/null || fail "the second run did not resume"
  local resumed_at
  resumed_at=$(awk '/run 2 of job/ { f = 1 } f && /^depth +[0-9]+:/ { print $2 + 0; exit }' "$out")
  [ "${resumed_at:-0}" -ge 2 ] || fail "the second run recomputed the table from depth ${resumed_at:-?}"
  echo "  job $jid: $((restarts + 1)) runs; the first stopped at its time-limit warning in depth $first ($mark),"
  echo "  the second resumed and went on from depth $resumed_at; no run reached the time limit itself"
  check_2x6_facts "$dir/cayley-loopover-2x6-no-symmetry/out"
  diff "$SLURM/jobs/2x6-plain/cayley-loopover-2x6-no-symmetry/out/depths.csv" "$dir/cayley-loopover-2x6-no-symmetry/out/depths.csv" >&2 ||
    fail "the resumed table differs from the uninterrupted one"
  echo "  depths.csv identical to the uninterrupted Slurm run of loopover:2x6"
}

slurm_two_nodes() {
  local dir=$SLURM/jobs/2x5-two-nodes jid port
  port=$(free_port)
  # Both "nodes" are this host: the coordinator still listens on loopback.
  export CAYLEY_LISTEN=127.0.0.1:$port CAYLEY_COORDINATOR=http://127.0.0.1:$port
  jid=$(submit "$dir" --nodes=2 -- loopover:2x5)
  wait_job "$jid" 300
  local out=$dir/cayley-$jid.out
  [ "$(job_field "$jid" JobState)" = COMPLETED ] || { show_job_output "$jid" "$out"; fail "job $jid ended $(job_field "$jid" JobState)"; }
  [ "$(job_field "$jid" NodeList)" = "n[1-2]" ] || fail "job $jid ran on $(job_field "$jid" NodeList)"
  grep 'on 2 node(s)' "$out" >/dev/null || fail "the script did not see 2 nodes"
  local joined
  joined=$(grep -cE 'worker [0-9]+ joined loopover:2x5' "$out" || true)
  [ "$joined" = 2 ] || { show_job_output "$jid" "$out"; fail "$joined workers joined, not 2"; }
  grep -oE 'this worker computed [0-9]+ tasks' "$out" | sed 's/^/  a worker: /'
  expect_published 2x5 "$dir/cayley-loopover-2x5/out/depths.csv"
  echo "  job $jid on nodes $(job_field "$jid" NodeList): the coordinator step on n1, a worker task on each node"
}

if want slurm; then
  T=$(date +%s.%N)
  mkdir -p "$SLURM/jobs"
  munge_up
  slurm_start 1
  SUMMARY+=("     $(printf '%6s' "$(elapsed "$T")") s  one-node Slurm cluster up (munged, slurmctld, slurmd)")
  check "slurm: cayley.sbatch loopover:2x5, table = published" slurm_published_2x5
  check "slurm: cayley.sbatch loopover:2x6 uninterrupted, 12! states, diameter 14" slurm_2x6_uninterrupted
  check "slurm: loopover:2x6 under --time=1 stops at the warning, requeues, resumes, same table" slurm_time_limit
  T=$(date +%s.%N)
  slurm_stop
  slurm_start 2
  SUMMARY+=("     $(printf '%6s' "$(elapsed "$T")") s  two-node Slurm cluster up (two slurmd on this host)")
  check "slurm: cayley.sbatch --nodes=2, a worker on each node, table = published" slurm_two_nodes
fi

# ================================================================ containers
CT=$WORK/containers
ctr() { podman run --label cayley-deploy-check "$@"; }
data_dir() { mkdir -p "$1" && chown 10001:10001 "$1"; }

container_build() {
  mkdir -p "$CT"
  "$REPO/deploy/container/context.sh" "$BIN" "$CT/context"
  podman build -q -f "$REPO/deploy/Dockerfile" -t "$IMAGE" "$CT/context" > /dev/null
  echo "  built $IMAGE ($(podman image inspect "$IMAGE" --format '{{.Size}}' | awk '{ printf "%.1f MB", $1 / 1e6 }'), FROM scratch, nothing pulled)"
  [ "$(podman image inspect "$IMAGE" --format '{{.Config.User}}')" = 10001:10001 ] || fail "the image does not run as 10001"
}

container_run() {
  data_dir "$CT/run"
  ctr --rm --network none -v "$CT/run:/data" "$IMAGE" run loopover:3x3 -q --out /data/out > "$CT/run.log"
  expect_published 3x3 "$CT/run/out/depths.csv"
  echo "  podman run --network none $IMAGE run loopover:3x3: ok"
}

container_pair() {
  local port data=$CT/pair c w wpid rc last
  port=$(free_port)
  data_dir "$data"
  CAYLEY_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  export CAYLEY_TOKEN
  local serve=(--network host -e CAYLEY_TOKEN -v "$data:/data" --entrypoint cayley-serve "$IMAGE"
    loopover:2x5 --listen "127.0.0.1:$port" --checkpoint-dir /data/checkpoint --out /data/out)
  local work=(--network host -e CAYLEY_TOKEN -v "$data:/data" --entrypoint cayley-worker "$IMAGE"
    --coordinator "http://127.0.0.1:$port")
  # First pair, stopped in the middle: once level 2 is written the worker is
  # killed (so nothing moves on), then the coordinator gets SIGINT.
  c=$(ctr -d "${serve[@]}")
  w=$(ctr -d "${work[@]}")
  wpid=$(podman inspect -f '{{.State.Pid}}' "$w")
  for _ in $(seq 1200); do
    [ -d "$data/checkpoint/levels/L0002" ] && break
    sleep 0.05
  done
  kill -KILL "$wpid"
  podman kill --signal INT "$c" > /dev/null
  rc=$(podman wait "$c")
  podman logs "$c" > "$CT/pair-1.log" 2>&1
  podman wait "$w" > /dev/null
  podman rm "$c" "$w" > /dev/null
  [ "$rc" != 0 ] || fail "the first coordinator finished before it was interrupted"
  grep -qE 'interrupted( \(SIG[A-Z]+\))?; the checkpoint is intact' "$CT/pair-1.log" || { cat "$CT/pair-1.log" >&2; fail "the first coordinator did not stop cleanly"; }
  [ ! -e "$data/out/depths.csv" ] || fail "a table was written by the interrupted run"
  last=$(ls "$data/checkpoint/levels" | tail -n 1)
  [ "${last#L}" -lt 12 ] || fail "the first pair got to the last level ($last)"
  echo "  first pair: worker killed, coordinator stopped with SIGINT (exit $rc), checkpoint at $last"
  # Second pair, the same two commands: cayley-serve finds the checkpoint and resumes.
  c=$(ctr -d "${serve[@]}")
  ctr --rm "${work[@]}" > "$CT/pair-2-worker.log" 2>&1 || { cat "$CT/pair-2-worker.log" >&2; fail "the worker failed"; }
  rc=$(podman wait "$c")
  podman logs "$c" > "$CT/pair-2.log" 2>&1
  podman rm "$c" > /dev/null
  [ "$rc" = 0 ] || { cat "$CT/pair-2.log" >&2; fail "the second coordinator exited $rc"; }
  grep -q 'holds a checkpoint; continuing it' "$CT/pair-2.log" || fail "cayley-serve did not resume"
  expect_published 2x5 "$data/out/depths.csv"
  echo "  second pair: cayley-serve resumed; coordinator + worker containers on 127.0.0.1:$port (host network)"
}

# ================================================================ compose
compose_up() {
  local data=$CT/compose port
  port=$(free_port)
  data_dir "$data"
  CAYLEY_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  export CAYLEY_TOKEN CAYLEY_PORT=$port CAYLEY_DATA=$data CAYLEY_WORKERS=2
  export CAYLEY_JOB="loopover:2x5"
  local pc=("$VENV/bin/podman-compose" -p cayley-deploy-check -f "$REPO/deploy/docker-compose.yml")
  timeout 300 "${pc[@]}" up > "$CT/compose.log" 2>&1 || { tail -40 "$CT/compose.log" >&2; fail "podman-compose up failed"; }
  local states
  states=$(podman ps -a --filter label=com.docker.compose.project=cayley-deploy-check --format '{{.Names}} {{.Status}}')
  "${pc[@]}" down > /dev/null 2>&1
  echo "$states" | sed 's/^/  /'
  [ "$(echo "$states" | grep -c 'worker')" = 2 ] || fail "not 2 worker containers"
  [ "$(echo "$states" | grep -c 'Exited (0)')" = 3 ] || fail "not every container exited 0"
  [ "$(grep -acE 'worker [0-9]+ joined loopover:2x5' "$CT/compose.log")" = 2 ] || fail "not 2 workers joined"
  grep -aoE '\[worker\].*this worker computed [0-9]+ tasks' "$CT/compose.log" | sed -E 's/.*this/  a worker:/'
  expect_published 2x5 "$data/out/depths.csv"
  echo "  podman-compose: coordinator + 2 workers (host network, 127.0.0.1:$port)"
}

# ================================================================ kubernetes
kube_validate() {
  local v
  for v in 1.28.0 1.37.0; do
    "$VENV/bin/kubernetes-validate" --strict --quiet -k "$v" "$REPO/deploy/kubernetes/cayley.yaml" ||
      fail "schema validation against Kubernetes $v"
    echo "  kubernetes-validate --strict -k $v: every object valid"
  done
  "$VENV/bin/python" "$REPO/deploy/kubernetes/check.py" "$REPO/deploy/kubernetes/cayley.yaml" | tail -n 1 | sed 's/^/  /'
}

kube_commands() {
  local dir=$CT/kube port
  port=$(free_port)
  data_dir "$dir/data"
  mkdir -p "$dir"
  "$VENV/bin/python" "$REPO/deploy/kubernetes/check.py" "$REPO/deploy/kubernetes/cayley.yaml" \
    --emit "$dir" "$port" loopover:2x5 > /dev/null
  local cmd wcmd c
  mapfile -t cmd < "$dir/coordinator.cmd"
  mapfile -t wcmd < "$dir/worker.cmd"
  echo "  coordinator: ${cmd[*]}"
  echo "  worker:      ${wcmd[*]}"
  CAYLEY_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  export CAYLEY_TOKEN
  # The claim becomes a host directory at /data, the emptyDir a tmpfs.
  c=$(ctr -d --network host -e CAYLEY_TOKEN -v "$dir/data:/data" --entrypoint "${cmd[0]}" "$IMAGE" "${cmd[@]:1}")
  ctr --rm --network host -e CAYLEY_TOKEN -v "$dir/data:/data" \
    --entrypoint "${wcmd[0]}" "$IMAGE" "${wcmd[@]:1}" > "$dir/worker.log" 2>&1 || { cat "$dir/worker.log" >&2; fail "the worker failed"; }
  [ "$(podman wait "$c")" = 0 ] || { podman logs "$c" >&2; fail "the coordinator failed"; }
  podman rm "$c" > /dev/null
  expect_published 2x5 "$dir/data/out/depths.csv"
}

# ================================================================ the docs, as written
# The indented block of docs/cluster.md that holds the line MARKER, without
# its indent: the commands a reader copies.
doc_block() {
  python3 - "$REPO/docs/cluster.md" "$1" <<'EOF'
import sys
text, marker = open(sys.argv[1]).read(), sys.argv[2]
blocks, block = [], []
for line in text.splitlines() + [""]:
    if line.startswith("    "):
        block.append(line[4:])
    elif block:
        blocks.append(block)
        block = []
found = [b for b in blocks if any(marker in l for l in b)]
assert len(found) == 1, f"{len(found)} blocks of docs/cluster.md hold {marker!r}"
print("\n".join(found[0]))
EOF
}

# Runs a block of docs/cluster.md from the repository root with bash, its
# placeholders $DATA and $PORT set; its output goes to LOG.
run_doc_block() { # MARKER DATA PORT LOG
  local block
  block=$(doc_block "$1")
  echo "$block" | sed 's/^/    | /'
  (cd "$REPO" && DATA=$2 PORT=$3 PATH="$VENV/bin:$PATH" timeout 300 bash -euo pipefail -c "$block") > "$4" 2>&1 ||
    { tail -40 "$4" >&2; fail "the commands of docs/cluster.md failed"; }
}

# The container, compose and offline Kubernetes commands of docs/cluster.md,
# exactly as written there: build the image and run one job; a coordinator
# and a worker container; podman-compose up; the manifests' validation.
# (The Slurm lines need several nodes and kubectl a cluster: the checks
# above run those files instead.)
doc_commands() {
  local dir=$CT/docs port c
  mkdir -p "$dir"
  rm -rf /tmp/cayley-image
  run_doc_block "run loopover:3x3 -q --out /data/out" "$dir/run" "" "$dir/run.log"
  rm -rf /tmp/cayley-image
  expect_published 3x3 "$dir/run/out/depths.csv"
  port=$(free_port)
  data_dir "$dir/pair"
  run_doc_block "--entrypoint cayley-worker" "$dir/pair" "$port" "$dir/pair.log"
  c=$(head -n 1 "$dir/pair.log")
  [ "$(podman wait "$c")" = 0 ] || { podman logs "$c" >&2; podman rm -f "$c" > /dev/null; fail "the coordinator failed"; }
  podman rm "$c" > /dev/null
  expect_published 2x5 "$dir/pair/out/depths.csv"
  port=$(free_port)
  run_doc_block "podman-compose -p" "$dir/compose" "$port" "$dir/compose.log"
  expect_published 2x5 "$dir/compose/out/depths.csv"
  # Down as it came up: the file reads its volume, port and token from these.
  CAYLEY_DATA=$dir/compose CAYLEY_PORT=$port CAYLEY_TOKEN=down \
    "$VENV/bin/podman-compose" -p cayley-deploy-check -f "$REPO/deploy/docker-compose.yml" down > "$dir/down.log" 2>&1 ||
    { cat "$dir/down.log" >&2; fail "podman-compose down failed"; }
  run_doc_block "kubernetes-validate --strict" "" "" "$dir/kube.log"
  tail -n 1 "$dir/kube.log" | sed 's/^/  /'
}

if need_containers; then
  check "container: deploy/Dockerfile builds offline from host binaries" container_build
fi
if want container; then
  check "container: cayley run loopover:3x3 (--network none), table = published" container_run
  check "container: coordinator + worker (--network host), SIGINT, cayley-serve resumes, table = published" container_pair
fi
if want compose; then
  check "compose: podman-compose up, coordinator + 2 workers (host network), table = published" compose_up
fi
if want kubernetes; then
  check "kubernetes: schema (kubernetes-validate --strict) and consistency (check.py)" kube_validate
  check "kubernetes: the manifests' container commands in the image (loopback), table = published" kube_commands
fi
if want container && want compose && want kubernetes; then
  check "docs/cluster.md: its container, compose and kubernetes-validate commands as written, tables = published" doc_commands
fi

finish
