#!/usr/bin/env bash
# Benchmark of the single-machine engine: wall time, neighbour evaluations
# per second per core and peak RSS for the given puzzles.
# Usage: bench/run.sh [PUZZLE ...]   (default: loopover:2x6 loopover:3x4)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p cayley-coordinator
puzzles=("$@")
[ ${#puzzles[@]} -gt 0 ] || puzzles=(loopover:2x6 loopover:3x4)
threads=${THREADS:-$(nproc)}
out=bench/out
mkdir -p "$out"
printf '%-16s %8s %10s %12s %10s %s\n' puzzle wall_s rss_MiB evals/s/core diameter states
for p in "${puzzles[@]}"; do
  dir="$out/${p//[:]/-}"
  /usr/bin/time -f '%e %M' -o "$out/time.txt" \
    ./target/release/cayley run "$p" --threads "$threads" --out "$dir" -q > "$out/stdout.txt"
  read -r wall rss_kb < "$out/time.txt"
  python3 - "$dir/result.json" "$wall" "$rss_kb" "$threads" "$p" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall, rss_kb, threads, name = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rate = r["evaluations"] / r["total_seconds"] / threads
print(f'{name:<16} {wall:8.2f} {rss_kb/1024:10.1f} {rate/1e6:10.1f} M {r["diameter"]:>8} {r["states"]}')
PY
done
