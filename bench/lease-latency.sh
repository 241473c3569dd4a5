#!/usr/bin/env bash
# A worker behind a slow link: `cayley serve loopover:4x4 --max-depth 5` and
# one `cayley-worker` of 2 threads joined through bench/delay_proxy.py, which
# delays each direction by DELAY seconds (default 0.0005: 1 ms round trip).
# The 4×4's sparse levels are one lease, file and report per chunk (309 a
# level), so they show how many round trips a task costs (docs/history.md,
# "Lease requests in flight"). Prints each level's seconds.
# Usage: bench/lease-latency.sh [BIN_DIR]   (default: this tree's release
#   build; BIN_DIR holds `cayley` and `cayley-worker`)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-}
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p cayley-coordinator -p cayley-worker)
  bin=$root/target/release
fi
delay=${DELAY:-0.0005}
scratch=$(mktemp -d)
trap 'kill $proxy 2>/dev/null; rm -rf "$scratch"' EXIT
"$bin/cayley" serve loopover:4x4 --max-depth 5 --listen 127.0.0.1:0 --token bench -q \
  --checkpoint-dir "$scratch/ck" --out "$scratch/out" 2> "$scratch/serve.log" > /dev/null &
server=$!
for _ in $(seq 200); do grep -q serving "$scratch/serve.log" 2>/dev/null && break; sleep 0.05; done
port=$(sed -n 's/.* on http:\/\/127.0.0.1:\([0-9]*\);.*/\1/p' "$scratch/serve.log")
listen=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$root/bench/delay_proxy.py" "$listen" 127.0.0.1 "$port" "$delay" &
proxy=$!
sleep 0.3
"$bin/cayley-worker" --coordinator "http://127.0.0.1:$listen" --token bench --threads 2 2> "$scratch/worker.log"
wait $server
python3 - "$scratch/ck/manifest.json" "$delay" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(f"one-way delay {float(sys.argv[2]) * 1000:.2f} ms; seconds per level:",
      " ".join(f"{d}:{l['seconds']:.3f}" for d, l in enumerate(m["levels"]) if d))
PY
