#!/usr/bin/env bash
# Distribution and checkpoint benchmarks on one machine (docs/history.md, "Distribution and checkpoint cost"):
#  1. loopover:2x6 with `cayley run` (embedded workers) vs `cayley serve` plus
#     two `cayley-worker` processes (one thread each), wall time and ratio;
#  2. per-task scheduling overhead: loopover:2x5 cut into few vs many shards;
#     the extra wall time divided by the extra tasks.
# (The in-process engine, once the baseline for the cost of checkpointing,
# was removed with the in-process engine: docs/history.md keeps its figures.)
# Usage: bench/distributed.sh [PUZZLE]   (default loopover:2x6)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p cayley-coordinator -p cayley-worker
puzzle=${1:-loopover:2x6}
out=bench/out/distributed
rm -rf "$out"; mkdir -p "$out"
bin=target/release

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.2f}')"; }

t0=$(now)
$bin/cayley run "$puzzle" -q --threads 2 --checkpoint-dir "$out/run-ckpt" --out "$out/run" > /dev/null
t1=$(now); embedded=$(elapsed "$t0" "$t1")

token=bench-token
t0=$(now)
$bin/cayley serve "$puzzle" --listen 127.0.0.1:0 --token "$token" -q \
  --checkpoint-dir "$out/serve-ckpt" --out "$out/serve" 2> "$out/serve.log" > /dev/null &
server=$!
for _ in $(seq 100); do grep -q "serving" "$out/serve.log" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/.* on \(http:[^;]*\);.*/\1/p' "$out/serve.log")
for i in 1 2; do
  $bin/cayley-worker --coordinator "$url" --token "$token" --threads 1 2> "$out/worker$i.log" &
done
wait "$server"
t1=$(now); distributed=$(elapsed "$t0" "$t1")
wait

few=$( { /usr/bin/time -f %e $bin/cayley run loopover:2x5 -q --shard-pieces 1 --out "$out/few" > /dev/null; } 2>&1 )
many=$( { /usr/bin/time -f %e $bin/cayley run loopover:2x5 -q --shard-pieces 3 --out "$out/many" > /dev/null; } 2>&1 )
tasks_few=$(python3 -c "import json; r=json.load(open('$out/few/result.json')); print(r['shards']*(len(r['depths'])))")
tasks_many=$(python3 -c "import json; r=json.load(open('$out/many/result.json')); print(r['shards']*(len(r['depths'])))")

python3 - "$embedded" "$distributed" "$few" "$many" "$tasks_few" "$tasks_many" "$out/run-ckpt/manifest.json" <<'PY'
import json, sys
embedded, distributed, few, many = map(float, sys.argv[1:5])
tf, tm = int(sys.argv[5]), int(sys.argv[6])
print(f"cayley run (embedded, 1 worker)   {embedded:8.2f} s")
print(f"serve + 2 worker processes        {distributed:8.2f} s   x{distributed/embedded:.2f} of embedded")
print(f"2x5: {tf} tasks {few:.2f} s, {tm} tasks {many:.2f} s -> {(many-few)/(tm-tf)*1000:.2f} ms per extra task")
m = json.load(open(sys.argv[7]))
print("checkpoint bytes per level (bytes/state):")
for d, l in enumerate(m["levels"]):
    print(f"  {d:>3} {l['count']:>12} states {l['bytes']:>12} bytes {l['bytes']/max(l['count'],1):10.4f}")
PY
