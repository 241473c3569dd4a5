#!/usr/bin/env bash
# Two cayley builds on twsearch sample definitions, run alternately (so a
# busy spell of the machine hits both alike): best wall of RUNS runs and
# its peak RSS for each, and whether their depth tables are equal.
# docs/history.md keeps the results ("The coded kernel's tables halved").
#
# Usage: bench/old-new-samples.sh OLD_CAYLEY NEW_CAYLEY SAMPLES_DIR NAME...
#   OLD_CAYLEY, NEW_CAYLEY  the two binaries (e.g. a worktree's build)
#   SAMPLES_DIR             a folder of .tws files (twsearch's samples/main)
#   NAME...                 sample names without .tws
# Environment: RUNS=N (default 3), EXTRA="--memory 330M" (options for both).
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
old=$(realpath "$1") new=$(realpath "$2") dir=$(realpath "$3")
shift 3
for bin in "$old" "$new"; do [ -x "$bin" ] || { echo "error: $bin is not an executable" >&2; exit 2; }; done
runs=${RUNS:-3}
read -r -a extra <<<"${EXTRA:-}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for name in "$@"; do
  [ -f "$dir/$name.tws" ] || { echo "error: no $dir/$name.tws" >&2; exit 2; }
  declare -A best=() rss=()
  equal=yes
  for _ in $(seq "$runs"); do
    for which in old new; do
      bin=$old
      [ "$which" = new ] && bin=$new
      rm -rf "$out/$which"
      start=$EPOCHREALTIME
      if ! /usr/bin/time -f '%M' -o "$out/time" "$bin" run -q "tws:$dir/$name.tws" --out "$out/$which" "${extra[@]}" \
        >"$out/$which.log" 2>&1; then
        echo "error: $which failed on $name: $(tail -n 1 "$out/$which.log")" >&2
        exit 1
      fi
      wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
      if [ -z "${best[$which]:-}" ] || awk -v a="$wall" -v b="${best[$which]}" 'BEGIN { exit !(a < b) }'; then
        best[$which]=$wall rss[$which]=$(tail -n 1 "$out/time")
      fi
    done
    cmp -s "$out/old/depths.csv" "$out/new/depths.csv" || equal=DIFFERENT
  done
  printf '| %s | %s s, %s MiB | %s s, %s MiB | tables %s |\n' "$name" "${best[old]}" "$((rss[old] / 1024))" \
    "${best[new]}" "$((rss[new] / 1024))" "$equal"
  unset best rss
done
