#!/usr/bin/env bash
# Samples the disk a checkpoint takes while a run writes it, and prints the
# peak: what `--keep-levels` and `cayley info`'s plan are checked against.
#
# Usage: bench/peak-du.sh CHECKPOINT_DIR PID [SECONDS]
#   Every SECONDS (default 5) while process PID lives, appends
#   "time bytes files" to CHECKPOINT_DIR/../du.log (du --apparent-size
#   would miss nothing here: chunk files are written whole, never sparse);
#   at the end prints the peak and when it was reached.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0"; exit 2; }
ck=$1 pid=$2 every=${3:-5}
log=$(dirname "$ck")/du.log
while kill -0 "$pid" 2>/dev/null; do
  if [ -d "$ck" ]; then
    bytes=$(du -sb "$ck" 2>/dev/null | cut -f1 || echo 0)
    files=$(find "$ck" -name '*.chunk' 2>/dev/null | wc -l)
    echo "$(date -u +%FT%TZ) $bytes $files" >> "$log"
  fi
  sleep "$every"
done
sort -k2,2n "$log" | tail -1 | awk '{printf "peak %.0f bytes (%.2f GiB) at %s, %d chunk files\n", $2, $2/2^30, $1, $3}'
