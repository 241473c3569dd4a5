#!/usr/bin/env bash
# A long out-of-core benchmark (hours: loopover:4x4, sliding:2x7), started or
# resumed in the background. It runs at normal priority: run other work
# under `nice -n 19`, and note that with the kernel's autogroup scheduling
# (/proc/sys/kernel/sched_autogroup_enabled = 1) nice only orders processes
# of one session, so this script turns autogroup off when it may (root).
#
# Usage: bench/long.sh PUZZLE DIR [cayley options...]   (PUZZLE may carry
#   options, e.g. "loopover:4x4 --metric stm")
#   First call: builds, copies the binary to DIR (later rebuilds do not touch
#   a running benchmark) and starts `cayley run PUZZLE` with the checkpoint
#   in DIR/ck. Later calls: `cayley resume DIR/ck` with the same binary.
#   MEMORY (default 6G) is the worker budget; THREADS (default: all cores);
#   ANTIPODES (default 10) how many antipode classes to list; KEEP (default
#   last2) the --keep-levels retention (every:3 keeps words cheap to find
#   when the early levels are far below the last two).
# Each session appends its output to DIR/log and its peak RSS and times to
# DIR/time.N; interrupt with `kill -INT <pid of cayley>` and call again to
# resume. The result lands in DIR/out.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,18p' "$0"; exit 2; }
puzzle=$1 dir=$2
shift 2
memory=${MEMORY:-6G}
threads=${THREADS:-$(nproc)}
antipodes=${ANTIPODES:-10}
keep=${KEEP:-last2}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ ! -x "$dir/cayley" ]; then
  (cd "$(dirname "$0")/.." && cargo build --release -q -p cayley-coordinator &&
    cp target/release/cayley "$dir/cayley" && git rev-parse HEAD > "$dir/commit")
fi
if [ -f "$dir/ck/manifest.json" ]; then
  command=(resume "$dir/ck")
else
  # shellcheck disable=SC2206 # the puzzle's options split on purpose
  command=(run $puzzle --checkpoint-dir "$dir/ck" --keep-levels "$keep" "$@")
fi
session=$(find "$dir" -maxdepth 1 -name 'time.*' | wc -l)
echo "$(date -u +%FT%TZ) session $session: cayley ${command[*]}" >> "$dir/log"
if [ -w /proc/sys/kernel/sched_autogroup_enabled ]; then
  echo 0 > /proc/sys/kernel/sched_autogroup_enabled
fi
nohup /usr/bin/time -v -o "$dir/time.$session" \
  "$dir/cayley" "${command[@]}" --memory "$memory" --threads "$threads" --antipodes "$antipodes" \
  --out "$dir/out" >> "$dir/log" 2>&1 < /dev/null &
echo "running in the background (pid $!); follow with: tail -f $dir/log"
