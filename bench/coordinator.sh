#!/usr/bin/env bash
# Coordinator cost per task (docs/history.md, "Per-task scheduling overhead"): one `cayley serve` and N `cayley-worker`
# processes (one thread each) on loopover:2x5 cut into 720 one-shard chunks
# (8,640 tiny tasks), for N = 1, 2, 4, 8. Reports the coordinator's CPU
# seconds (user + system, from /proc) per task: the work it does per result
# (lease, header and index check, journal line) must not grow with N.
# Usage: bench/coordinator.sh [N ...]   (default: 1 2 4 8)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p cayley-coordinator -p cayley-worker
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 2 4 8)
out=bench/out/coordinator
bin=target/release
token=bench-token
tick=$(getconf CLK_TCK)
printf '%8s %8s %10s %12s %14s\n' workers tasks wall_s coord_cpu_s cpu_ms_per_task
for n in "${counts[@]}"; do
  rm -rf "$out/$n"; mkdir -p "$out/$n"
  $bin/cayley serve loopover:2x5 --shard-pieces 3 --chunk-shards 1 --listen 127.0.0.1:7199 \
    --token "$token" --checkpoint-dir "$out/$n/ck" --out "$out/$n/out" -q > /dev/null 2> "$out/$n/serve.log" &
  coord=$!
  start=$(date +%s.%N)
  sleep 0.3
  workers=()
  for _ in $(seq "$n"); do
    $bin/cayley-worker --coordinator http://127.0.0.1:7199 --token "$token" --threads 1 2>> "$out/$n/workers.log" &
    workers+=($!)
  done
  # The coordinator's CPU time, sampled until it exits (it writes results last).
  cpu=0
  while kill -0 "$coord" 2>/dev/null; do
    stat=$(cat /proc/$coord/stat 2>/dev/null || true)
    [ -n "$stat" ] && cpu=$(echo "$stat" | awk '{print $14 + $15}')
    sleep 0.05
  done
  wait "$coord"
  end=$(date +%s.%N)
  for w in "${workers[@]}"; do wait "$w" || true; done
  tasks=$(cat "$out/$n"/ck/levels/*/done.jsonl | wc -l)
  python3 -c "
cpu = $cpu / $tick
print(f'{$n:>8} {$tasks:>8} {$end - $start:>10.2f} {cpu:>12.2f} {1000 * cpu / $tasks:>14.3f}')"
done
