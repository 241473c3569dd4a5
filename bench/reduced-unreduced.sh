#!/usr/bin/env bash
# Every twisty puzzle that cayley reduces by its symmetries, searched both
# ways: reduced (the default) and `--no-symmetry`, depth tables compared
# depth by depth, with the wall time and peak RSS of each.
#
# Usage: bench/reduced-unreduced.sh [SPEC...]
#   SPEC  a puzzle as `cayley run` takes it (quote one with options), or a
#         folder: every .tws file in it (twsearch's samples/main). Default:
#         tests/data/puzzles/*.tws and the 3×3×3's subsets listed below.
# Environment:
#   TIMEOUT=S    seconds per run (default 300): a puzzle whose runs take
#                longer is listed as skipped, with the reason
#   MEMORY=SIZE  --memory for both runs (default: cayley's own)
#   CAYLEY       the binary (default: target/release/cayley, built)
#   OUT=DIR      where outputs go (default bench/out/reduced-unreduced)
# A puzzle is skipped, with the reason, when `cayley info` does not reduce
# it by symmetry or when either run fails or times out.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${CAYLEY:-}" ]; then
  cayley=$(realpath "$CAYLEY")
else
  cargo build --release -q -p cayley-coordinator
  cayley=$PWD/target/release/cayley
fi
timeout_s=${TIMEOUT:-300}
out=${OUT:-bench/out/reduced-unreduced}
mkdir -p "$out"
memory=()
[ -n "${MEMORY:-}" ] && memory=(--memory "$MEMORY")

specs=()
if [ $# -eq 0 ]; then
  set -- tests/data/puzzles \
    "tws:tests/data/puzzles/3x3x3.tws --noedges --nocenters" \
    "tws:tests/data/puzzles/3x3x3.tws --nocorners --nocenters --moves U,R,F" \
    "tws:tests/data/puzzles/3x3x3.tws --nocorners --nocenters --moves U,R,F --metric stm"
fi
for arg in "$@"; do
  if [ -d "$arg" ]; then
    for f in "$arg"/*.tws; do specs+=("tws:$f"); done
  else
    specs+=("$arg")
  fi
done

# Runs cayley under timeout and /usr/bin/time; sets wall (s), rss (MiB) and
# status (0, or why it failed).
timed() {
  local log=$1 t=$out/time.txt start=$EPOCHREALTIME
  shift
  status=0
  # shellcheck disable=SC2086 # the spec's options split on purpose
  if /usr/bin/time -f '%M' -o "$t" timeout --kill-after=5 "$timeout_s" "$cayley" run -q "$@" "${memory[@]}" >"$log" 2>&1; then
    wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
    rss=$(awk '{ printf "%.0f", $1 / 1024 }' <(tail -n 1 "$t"))
  else
    local rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then status="timeout after ${timeout_s} s"; else status="exit $rc: $(tail -n 1 "$log" | cut -c1-100)"; fi
  fi
}

depths() { python3 -c 'import json, sys; print(" ".join(map(str, json.load(open(sys.argv[1]))["depths"])))' "$1"; }

printf '| puzzle | symmetries | bits a level, reduced / unreduced | reduced | unreduced | tables |\n'
printf '|---|---|---|---|---|---|\n'
skipped=() unequal=0 n=0
for spec in "${specs[@]}"; do
  name=$(echo "${spec#tws:}" | sed -e 's|.*/||' -e 's/ --/-/g' -e 's/[^A-Za-z0-9_.,-]/_/g')
  # shellcheck disable=SC2086 # the spec's options split on purpose
  info=$("$cayley" info $spec 2>&1) || true
  order=$(sed -n 's/^symmetry  *reduced by a group of \([0-9]*\) symmetries.*/\1/p' <<<"$info")
  if [ -z "$order" ]; then
    why=$(grep -m1 -E '^(symmetry|search|error)' <<<"$info" | sed -e 's/^symmetry  *//' -e 's/^search  *//' | cut -c1-160 || true)
    skipped+=("$spec: not reduced (${why:-no symmetry line})")
    continue
  fi
  # shellcheck disable=SC2086
  unreduced_info=$("$cayley" info $spec --no-symmetry 2>&1) || true
  bits=$(sed -n 's/^states  *\([0-9,]*\) stored per level.*/\1/p' <<<"$info" | tr -d ,)
  raw=$(sed -n 's/^states  *\([0-9,]*\) ranked.*/\1/p' <<<"$unreduced_info" | tr -d ,)
  rm -rf "$out/$name".{reduced,unreduced}
  # shellcheck disable=SC2086
  timed "$out/$name.reduced.log" $spec --out "$out/$name.reduced"
  if [ "$status" != 0 ]; then skipped+=("$spec: reduced: $status"); continue; fi
  r_wall=$wall r_rss=$rss
  # shellcheck disable=SC2086
  timed "$out/$name.unreduced.log" $spec --no-symmetry --out "$out/$name.unreduced"
  if [ "$status" != 0 ]; then skipped+=("$spec: unreduced: $status"); continue; fi
  n=$((n + 1))
  a=$(depths "$out/$name.reduced/result.json") b=$(depths "$out/$name.unreduced/result.json")
  if [ "$a" = "$b" ]; then verdict="equal ($(wc -w <<<"$a") depths)"; else verdict="DIFFER"; unequal=$((unequal + 1)); fi
  printf '| `%s` | %s | %s / %s | %s s, %s MiB | %s s, %s MiB | %s |\n' \
    "${spec#tws:}" "$order" "$bits" "${raw:-?}" "$r_wall" "$r_rss" "$wall" "$rss" "$verdict"
done
for s in "${skipped[@]}"; do echo "skipped: $s"; done
echo "$n puzzles searched both ways; $unequal with different tables"
[ "$unequal" = 0 ]
