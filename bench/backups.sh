#!/usr/bin/env bash
# Backup tasks with a straggler (docs/history.md, "Backup tasks with a straggler"): `cayley serve` plus two
# `cayley-worker`s (one thread each) on PUZZLE, one of them slowed by
# SIGSTOP/SIGCONT cycles (running RUN_MS out of every PERIOD_MS), with and
# without `--no-backup-tasks`. Prints each level's seconds (manifest.json)
# and the job's wall time for both runs, interleaved ROUNDS times.
# Usage: bench/backups.sh [PUZZLE_ARGS...]   (default: loopover:2x6 --no-symmetry)
# Environment: ROUNDS (1), RUN_MS (50), PERIOD_MS (250), MEMORY (400M).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p cayley-coordinator -p cayley-worker
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(loopover:2x6 --no-symmetry)
rounds=${ROUNDS:-1} run_ms=${RUN_MS:-50} period_ms=${PERIOD_MS:-250} memory=${MEMORY:-400M}
bin=target/release
out=bench/out/backups
token=bench-token

# Slows process $1 until it exits: RUN_MS running, the rest stopped.
slow_down() {
  local pid=$1 stop_s run_s
  run_s=$(python3 -c "print($run_ms / 1000)")
  stop_s=$(python3 -c "print(($period_ms - $run_ms) / 1000)")
  while kill -0 "$pid" 2>/dev/null; do
    sleep "$run_s"; kill -STOP "$pid" 2>/dev/null || break
    sleep "$stop_s"; kill -CONT "$pid" 2>/dev/null || break
  done
}

one_run() { # $1 = label, $2... = extra serve options
  local label=$1; shift
  local dir=$out/$label port start end
  rm -rf "$dir"; mkdir -p "$dir"
  port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
  start=$(date +%s.%N)
  $bin/cayley serve "${args[@]}" --listen "127.0.0.1:$port" --token "$token" -q \
    --checkpoint-dir "$dir/ck" --out "$dir/out" "$@" > /dev/null 2> "$dir/serve.log" &
  local coord=$!
  for _ in $(seq 200); do grep -q serving "$dir/serve.log" 2>/dev/null && break; sleep 0.05; done
  $bin/cayley-worker --coordinator "http://127.0.0.1:$port" --token "$token" --threads 1 --memory "$memory" \
    --name fast 2> "$dir/fast.log" &
  local fast=$!
  $bin/cayley-worker --coordinator "http://127.0.0.1:$port" --token "$token" --threads 1 --memory "$memory" \
    --name slow 2> "$dir/slow.log" &
  local slow=$!
  slow_down "$slow" &
  local slower=$!
  wait "$coord"
  end=$(date +%s.%N)
  kill -CONT "$slow" 2>/dev/null || true
  wait "$fast" "$slow" "$slower" 2>/dev/null || true
  python3 - "$label" "$dir/ck/manifest.json" "$start" "$end" "$dir/serve.log" <<'PY'
import json, sys
label, manifest, start, end, log = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
m = json.load(open(manifest))
secs = [l["seconds"] for l in m["levels"][1:]]
backups = sum(1 for line in open(log) if "computes a backup copy" in line)
print(f"{label:>12}: wall {end - start:7.2f} s, levels 1-{len(secs)} sum {sum(secs):7.2f} s, "
      f"{backups} backup copies; per level: " + " ".join(f"{s:.2f}" for s in secs))
PY
}

echo "puzzle: ${args[*]}; slow worker runs ${run_ms} ms of every ${period_ms} ms"
for _ in $(seq "$rounds"); do
  one_run backups
  one_run no-backups --no-backup-tasks
done
