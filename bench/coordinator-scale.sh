#!/usr/bin/env bash
# Coordinator scale (docs/history.md, "Coordinator scale with simulated workers"): one `cayley serve` fed by N simulated workers
# (worker/examples/simulated_workers.rs: one process, N connections, no
# computing; each result is a real chunk file of empty shards, checked by the
# coordinator like any other). The job, loopover:2x6 --no-symmetry cut into
# 11,880 one-shard tasks a level, runs to depth 9: 106,920 tasks. Reports
# tasks per second, the coordinator's CPU seconds per task (user + system,
# /proc) and its peak RSS (VmHWM). Checkpoint in /dev/shm (the coordinator's
# journal and manifest writes, not a disk, are measured).
# Usage: bench/coordinator-scale.sh [N ...]   (default: 64 256)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p cayley-coordinator -p cayley-worker --example simulated_workers
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(64 256)
bin=target/release
root=$(mktemp -d /dev/shm/cayley-scale-XXXXXX)
trap 'rm -rf "$root"' EXIT
token=bench-token
tick=$(getconf CLK_TCK)
printf '%8s %8s %8s %10s %12s %14s %12s\n' workers tasks wall_s tasks_per_s coord_cpu_s cpu_ms_per_task peak_rss_MiB
for n in "${counts[@]}"; do
  dir=$root/$n
  mkdir -p "$dir"
  port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
  $bin/cayley serve loopover:2x6 --no-symmetry --shard-pieces 4 --chunk-shards 1 --max-depth 9 \
    --listen "127.0.0.1:$port" --token "$token" --checkpoint-dir "$dir/ck" --out "$dir/out" -q \
    > /dev/null 2> "$dir/serve.log" &
  coord=$!
  for _ in $(seq 200); do grep -q serving "$dir/serve.log" 2>/dev/null && break; sleep 0.05; done
  start=$(date +%s.%N)
  $bin/examples/simulated_workers "http://127.0.0.1:$port" "$token" "$n" > "$dir/sim.log" 2>&1 &
  sim=$!
  cpu=0 rss=0
  while kill -0 "$coord" 2>/dev/null; do
    stat=$(cat /proc/$coord/stat 2>/dev/null || true)
    [ -n "$stat" ] && cpu=$(echo "$stat" | awk '{print $14 + $15}')
    hwm=$(awk '/VmHWM/ {print $2}' /proc/$coord/status 2>/dev/null || true)
    [ -n "$hwm" ] && rss=$hwm
    sleep 0.1
  done
  end=$(date +%s.%N)
  wait "$coord" || true
  wait "$sim" || true
  tasks=$(cat "$dir"/ck/levels/*/done.jsonl | wc -l)
  python3 -c "
cpu = $cpu / $tick
wall = $end - $start
print(f'{$n:>8} {$tasks:>8} {wall:>8.1f} {$tasks / wall:>10.0f} {cpu:>12.2f} {1000 * cpu / $tasks:>14.3f} {$rss / 1024:>12.1f}')"
  rm -rf "$dir"
done
