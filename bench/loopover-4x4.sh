#!/usr/bin/env bash
# The 4×4 Loopover's complete table (16! states), started, resumed and
# collected into results/.
#
# Usage: bench/loopover-4x4.sh run METRIC [DIR]      start or resume (background)
#        bench/loopover-4x4.sh collect METRIC [DIR]  check and copy the result
#   METRIC is mtm or stm; DIR defaults to /work/bench-runs/4x4-METRIC.
#   MEMORY (default 15G) is the worker budget, THREADS (default: all cores).
# `run` is bench/long.sh with every antipode class listed (--antipodes
# 100000) and the checkpoint in DIR/ck; call it again after an interruption
# to resume. Each level's line in DIR/log gives its states, wall seconds and
# worker seconds by phase (load, sources, compute, write, other) and cache
# hit rate; DIR/out/result.json has the same per level (`level_io`).
# `collect` checks the finished result outside the engine (counts sum to
# 16!, every antipode class listed and closed under inversion, every word
# replays with the generator cycles alone) and copies it to
# results/loopover-4x4-METRIC/ with DIR's log and the run's figures
# (command, commit, machine, date, wall time, peak RSS) in RUN.md.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,20p' "$0"; exit 2; }
action=$1 metric=$2
dir=${3:-/work/bench-runs/4x4-$metric}
root=$(cd "$(dirname "$0")/.." && pwd)
case $action in
  run)
    MEMORY=${MEMORY:-15G} ANTIPODES=100000 exec "$root/bench/long.sh" "loopover:4x4 --metric $metric" "$dir" ;;
  collect)
    out=$dir/out
    [ -f "$out/result.json" ] || { echo "error: no finished result in $out" >&2; exit 1; }
    "$dir/cayley" info loopover:4x4 --metric "$metric" > "$dir/info.txt"
    python3 "$root/bench/check-antipodes.py" "$out" 4 4
    python3 "$root/bench/replay-antipodes.py" "$dir/info.txt" "$out/antipodes.txt" | tail -1
    dest=$root/results/loopover-4x4-$metric
    mkdir -p "$dest"
    cp "$out"/{result.json,depths.csv,depths.svg,antipodes.txt} "$dest/"
    {
      echo "# loopover:4x4, $metric"
      echo
      echo "- command: \`$(sed -n 's/^.*session 0: //p' "$dir/log" | head -1)\`"
      echo "- commit: $(cat "$dir/commit" 2>/dev/null || echo unknown)"
      echo "- machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), $(free -g | awk '/Mem:/{print $2}') GiB"
      echo "- sessions (start, command):"
      grep ' session ' "$dir/log" | sed 's/^/  - /'
      for t in "$dir"/time.*; do
        # A session killed with its machine leaves an empty record.
        [ -s "$t" ] || { echo "- $(basename "$t"): no record (the session was lost)"; continue; }
        echo "- $(basename "$t"): wall $(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$t"), peak RSS $(( $(sed -n 's/.*Maximum resident set size (kbytes): //p' "$t") / 1024 )) MiB"
      done
      echo
      echo "Levels (from the run's log):"
      echo
      echo '```'
      grep '^depth' "$dir/log"
      echo '```'
    } > "$dest/RUN.md"
    echo "copied to $dest" ;;
  *) echo "error: unknown action '$action' (run or collect)" >&2; exit 2 ;;
esac
