#!/usr/bin/env bash
# cayley against twsearch's C++ God's-number mode (`twsearch -g`) on the
# sample definitions both can search here: wall time and peak RSS of each
# (/usr/bin/time, whole process), and whether the depth tables are equal.
# docs/history.md, "twsearch's samples side by side", keeps the results.
#
# Usage: bench/twsearch-samples.sh TWSEARCH SAMPLES_DIR [CAYLEY]
#   TWSEARCH     the C++ twsearch binary (cubing/twsearch before its C++
#                sources were removed; see docs/history.md for the commit)
#   SAMPLES_DIR  a folder of .tws files (twsearch's samples/main)
#   CAYLEY       the cayley binary (default: target/release/cayley, built)
# Environment:
#   SAMPLES="lo33 pyramorphix"  only these samples (names without .tws)
#   QUICK=1      the quick set: a 30 s timeout, and samples are skipped whose
#                ranked states exceed QUICK_MAX_RANKED (default 3e9) or whose
#                group order and ranked states both exceed QUICK_MAX_ORDER
#                (default 1.2e8; identical pieces make the group order on
#                points far larger than the positions)
#   TIMEOUT=S    seconds per program and sample (default 900, QUICK 30)
#   RUNS=N       runs of each program per sample; the best wall counts (1)
#   MEMORY_MB=M  cap: cayley --memory MM, twsearch -M M (default: neither)
#   CAYLEY_MEMORY_MB="233=330 3p1=400"  cayley's --memory for these samples
#                only (twsearch as is): does cayley keep its time within the
#                memory twsearch needs? The row's cayley cell names the budget.
#   OUT=DIR      where outputs go (default bench/out/twsearch-samples)
# A sample is skipped, with the reason, when cayley info says it cannot be
# searched or a whole level (with tables) exceeds the memory budget, or
# when either program fails or times out.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
twsearch=$(realpath "$1")
samples_dir=$(realpath "$2")
cd "$(dirname "$0")/.."
if [ $# -ge 3 ]; then
  cayley=$(realpath "$3")
else
  nice -n 19 cargo build --release -q -p cayley-coordinator
  cayley=$PWD/target/release/cayley
fi
[ -x "$twsearch" ] || { echo "error: $twsearch is not an executable" >&2; exit 2; }
[ -d "$samples_dir" ] || { echo "error: $samples_dir is not a folder" >&2; exit 2; }
quick=${QUICK:-0}
if [ "$quick" = 1 ]; then timeout_s=${TIMEOUT:-30}; else timeout_s=${TIMEOUT:-900}; fi
runs=${RUNS:-1}
out=${OUT:-bench/out/twsearch-samples}
mkdir -p "$out"
cayley_mem=() tws_mem=()
if [ -n "${MEMORY_MB:-}" ]; then
  cayley_mem=(--memory "${MEMORY_MB}M")
  tws_mem=(-M "$MEMORY_MB")
fi

declare -A sample_mem=()
for pair in ${CAYLEY_MEMORY_MB:-}; do
  case $pair in
    *=[0-9]*) sample_mem[${pair%%=*}]=${pair#*=} ;;
    *) echo "error: CAYLEY_MEMORY_MB wants NAME=MIB pairs, not '$pair'" >&2; exit 2 ;;
  esac
done

if [ -n "${SAMPLES:-}" ]; then
  read -r -a names <<<"$SAMPLES"
else
  names=()
  for f in "$samples_dir"/*.tws; do names+=("$(basename "$f" .tws)"); done
fi

# Runs "$@" under timeout and /usr/bin/time RUNS times; sets `wall` (best, s),
# `rss` (KiB, of the best run) and `status` (0, or why it failed).
timed() {
  local log=$1 t=$out/time.txt
  shift
  wall="" rss="" status=0
  for _ in $(seq "$runs"); do
    local start=$EPOCHREALTIME
    if /usr/bin/time -f '%M' -o "$t" timeout --kill-after=5 "$timeout_s" "$@" >"$log" 2>&1; then
      # Wall from the shell's clock (microseconds; time's %e has 10 ms).
      local w r
      w=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
      r=$(tail -n 1 "$t")
      if [ -z "$wall" ] || awk -v a="$w" -v b="$wall" 'BEGIN { exit !(a < b) }'; then
        wall=$w rss=$r
      fi
    else
      local rc=$?
      if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then status="timeout after ${timeout_s} s"; else status="exit $rc: $(grep -v '^#' "$log" | tail -n 1 | cut -c1-100)"; fi
      return
    fi
  done
}

# Bytes of a size as cayley prints it (`22.5 KiB`, `1.3 GiB`, `96 B`).
bytes_of() {
  awk -v n="$1" -v u="$2" 'BEGIN { split("B KiB MiB GiB TiB PiB", units, " ");
    for (i = 1; i <= 6; i++) if (units[i] == u) { printf "%.0f", n * 1024 ^ (i - 1); exit } print -1 }'
}

printf '| sample | group order | cayley ranks | cayley | twsearch -g | cayley/twsearch wall | tables |\n'
printf '|---|---|---|---|---|---|---|\n'
skipped=()
for name in "${names[@]}"; do
  file=$samples_dir/$name.tws
  if [ ! -f "$file" ]; then skipped+=("$name: no file $file"); continue; fi
  run_mem=("${cayley_mem[@]}") budget_note=""
  if [ -n "${sample_mem[$name]:-}" ]; then
    run_mem=(--memory "${sample_mem[$name]}M") budget_note=" (--memory ${sample_mem[$name]}M)"
  fi
  info=$("$cayley" info "tws:$file" "${run_mem[@]}" 2>&1) || true
  order=$(sed -n 's/^group order  *\([0-9]*\).*/\1/p' <<<"$info")
  # "N ranked, …" (coded and block layouts) or "N stored per level for M"
  # (a symmetry-reduced space: N bits a level).
  ranked=$(sed -n -e 's/^states  *\([0-9,]*\) ranked.*/\1/p' \
    -e 's/^states  *\([0-9,]*\) stored per level.*/\1/p' <<<"$info" | tr -d ,)
  why=$(grep -m1 -E '^(search |error)' <<<"$info" | sed 's/^search  *//' | cut -c1-160 || true)
  if [ -z "$ranked" ]; then skipped+=("$name: cayley: ${why:-no ranked states in cayley info}"); continue; fi
  read -r budget_n budget_u < <(sed -n 's/^memory  *\([0-9.]*\) \([KMGTP]*i*B\) per worker.*/\1 \2/p' <<<"$info")
  read -r level_n level_u < <(sed -n 's/.*a budget of \([0-9.]*\) \([KMGTP]*i*B\) holds a whole level.*/\1 \2/p' <<<"$info")
  if [ "$(bytes_of "$level_n" "$level_u")" -gt "$(bytes_of "$budget_n" "$budget_u")" ]; then
    skipped+=("$name: cayley: a level and its tables take $level_n $level_u, more than the budget of $budget_n $budget_u")
    continue
  fi
  if [ "$quick" = 1 ]; then
    if awk -v o="$order" -v r="$ranked" -v mo="${QUICK_MAX_ORDER:-1.2e8}" -v mr="${QUICK_MAX_RANKED:-3e9}" \
      'BEGIN { exit !((o > mo && r > mo) || r > mr) }'; then
      skipped+=("$name: not quick (group order $order, $ranked ranked)")
      continue
    fi
  fi
  rm -rf "$out/$name.cayley"
  timed "$out/$name.cayley.log" "$cayley" run -q "tws:$file" --out "$out/$name.cayley" "${run_mem[@]}"
  if [ "$status" != 0 ]; then skipped+=("$name: cayley: $status"); continue; fi
  c_wall=$wall c_rss=$rss
  timed "$out/$name.twsearch.log" "$twsearch" -g "${tws_mem[@]}" "$file"
  if [ "$status" != 0 ]; then skipped+=("$name: twsearch: $status"); continue; fi
  t_wall=$wall t_rss=$rss
  # Depth tables: cayley's depths.csv, twsearch's `Dist d cnt n` lines.
  mine=$(tail -n +2 "$out/$name.cayley/depths.csv" | tr ',' ' ')
  theirs=$(sed -n 's/^Dist \([0-9]*\) cnt \([0-9]*\) .*/\1 \2/p' "$out/$name.twsearch.log" | awk '$2 > 0')
  if [ -z "$theirs" ]; then equal="no table from twsearch"
  elif [ "$mine" = "$theirs" ]; then equal="equal ($(wc -l <<<"$mine") depths)"
  else equal="DIFFERENT"; fi
  ratio=$(awk -v c="$c_wall" -v t="$t_wall" 'BEGIN { if (t > 0) printf "%.2f", c / t; else print "-" }')
  printf '| %s | %s | %s | %s s, %s MiB%s | %s s, %s MiB | %s | %s |\n' "$name" "$order" "$ranked" \
    "$c_wall" "$((c_rss / 1024))" "$budget_note" "$t_wall" "$((t_rss / 1024))" "$ratio" "$equal"
done
if [ ${#skipped[@]} -gt 0 ]; then
  echo
  echo "Skipped:"
  printf -- '- %s\n' "${skipped[@]}"
fi
