#!/usr/bin/env bash
# A long out-of-core benchmark (hours: loopover:2x7, sliding:2x7), started or
# resumed in the background under `nice`, so other work can go on.
#
# Usage: bench/long.sh PUZZLE DIR [cayley options...]
#   First call: builds, copies the binary to DIR (later rebuilds do not touch
#   a running benchmark) and starts `cayley run PUZZLE` with the checkpoint
#   in DIR/ck. Later calls: `cayley resume DIR/ck` with the same binary.
#   MEMORY (default 6G) is the worker budget; THREADS (default: all cores).
# Each session appends its output to DIR/log and its peak RSS and times to
# DIR/time.N; interrupt with `kill -INT <pid of cayley>` and call again to
# resume. The result lands in DIR/out.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,13p' "$0"; exit 2; }
puzzle=$1 dir=$2
shift 2
memory=${MEMORY:-6G}
threads=${THREADS:-$(nproc)}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ ! -x "$dir/cayley" ]; then
  (cd "$(dirname "$0")/.." && cargo build --release -q -p cayley-coordinator &&
    cp target/release/cayley "$dir/cayley")
fi
if [ -f "$dir/ck/manifest.json" ]; then
  command=(resume "$dir/ck")
else
  command=(run "$puzzle" --checkpoint-dir "$dir/ck" --keep-levels last2 "$@")
fi
session=$(find "$dir" -maxdepth 1 -name 'time.*' | wc -l)
echo "$(date -u +%FT%TZ) session $session: cayley ${command[*]}" >> "$dir/log"
nohup nice -n 19 /usr/bin/time -v -o "$dir/time.$session" \
  "$dir/cayley" "${command[@]}" --memory "$memory" --threads "$threads" \
  --out "$dir/out" >> "$dir/log" 2>&1 < /dev/null &
echo "running in the background (pid $!); follow with: tail -f $dir/log"
