#!/usr/bin/env bash
# Thread scaling of one machine, as a table: wall time of each job at 1, 2,
# 4, 8, 16 … threads (those the machine has), its speed-up over 2 threads,
# the threads' utilization over the job's levels (pool CPU time over
# threads × wall, from result.json), the cores the whole process used
# (its CPU time over its wall time) and its CPU seconds in each round; then the same machine's threads split
# over K in-process workers (`--workers K`) and over K `cayley-worker`
# processes of a `cayley serve`, against one worker with every thread.
#
# Jobs (docs/history.md, "Every core at work"):
#   2x6   cayley run loopover:2x6 --no-symmetry              (block kernel, dense)
#   4x4   cayley run loopover:4x4 --max-depth 8 --keep-levels last2  (sparse, reduced)
#   3x5   cayley run loopover:3x5 --max-depth 10             (reduced, dense)
#   4x4d9 cayley run loopover:4x4 --max-depth 9 --keep-levels last2  (the same as 4x4 with
#         its fixed costs about a fortieth of the run, not a tenth: docs/history.md, "Fixed costs
#         a 16-thread run cannot shorten"; not in the default JOBS)
#
# Usage: bench/scaling.sh [CAYLEY]   (default: this tree's release build; a
#   cayley-worker is looked for beside it)
# Environment: JOBS (default "2x6 4x4 3x5"), THREADS (default: 1 2 4 8 16 …
#   up to nproc, and nproc), ROUNDS (default 1: each job's thread counts
#   are run ROUNDS times, interleaved, and the table gives the median wall
#   with every round's, and each speed-up also round by round (median and
#   range): a VM's wall varies by a tenth between runs of the same binary,
#   and drifts between rounds more than within one), WORKERS (K values, default "2 4"; empty: no K table), MEMORY
#   (default: 20G or half the machine's memory, whichever is less), LIMIT
#   (seconds per run, default 600: a run past it is reported as such),
#   SCRATCH (default: /dev/shm when it has 16 GiB free, else whichever of
#   /dev/shm, the temp dir and /var/tmp has the most room), CEILING (copy counts K, default none: K 1-thread runs of
#   each job at once, each its own process and checkpoint, and K times the
#   1-thread wall over theirs, the speed-up K threads could reach if they
#   shared nothing but the machine: its cores' clock, caches and memory).
# Everything a run prints goes to $OUT (default: a temp dir), one log per run.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cayley=${1:-}
if [ -z "$cayley" ]; then
  (cd "$root" && cargo build --release -q -p cayley-coordinator -p cayley-worker) || exit 1
  cayley=$root/target/release/cayley
fi
worker=$(dirname "$cayley")/cayley-worker
cores=$(nproc)
if [ -z "${THREADS:-}" ]; then
  THREADS=""
  for t in 1 2 4 8 16 32 64 128; do [ "$t" -le "$cores" ] && THREADS="$THREADS $t"; done
  case " $THREADS " in *" $cores "*) ;; *) THREADS="$THREADS $cores" ;; esac
fi
half=$(( $(awk '/MemTotal/{print $2}' /proc/meminfo) / 2 / 1024 / 1024 ))
MEMORY=${MEMORY:-$([ "$half" -lt 20 ] && echo "${half}G" || echo 20G)}
LIMIT=${LIMIT:-600}
ROUNDS=${ROUNDS:-1}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
if [ -z "${SCRATCH:-}" ]; then
  # /dev/shm when it has 16 GiB free, else the filesystem with the most
  # room. The planned checkpoints (`cayley info`): 4x4 1017 MiB, 4x4d9
  # 7.1 GiB, 3x5 3.0 GiB, 2x6 229 MiB, times the CEILING copies; tmpfs
  # keeps the filesystem out of the thread figures (an ext4 without a
  # journal made depth 5 of the 4x4 3-4x slower: docs/history.md, 2026-12-02).
  shm=$(df -Pk /dev/shm 2>/dev/null | awk 'NR==2{print $4}')
  if [ -n "$shm" ] && [ "$shm" -ge $((16 * 1024 * 1024)) ]; then
    SCRATCH=/dev/shm
  else
    best=0
    for d in /dev/shm "${TMPDIR:-/tmp}" /var/tmp; do
      free=$(df -Pk "$d" 2>/dev/null | awk 'NR==2{print $4}')
      if [ -n "$free" ] && [ "$free" -gt "$best" ]; then best=$free; SCRATCH=$d; fi
    done
  fi
fi
work=$(mktemp -d "$SCRATCH/cayley-scaling.XXXXXX")
trap 'rm -rf "$work"' EXIT

args_of() { # JOB: the job's arguments
  case $1 in
    2x6) echo "loopover:2x6 --no-symmetry" ;;
    4x4) echo "loopover:4x4 --max-depth 8 --keep-levels last2" ;;
    3x5) echo "loopover:3x5 --max-depth 10" ;;
    4x4d9) echo "loopover:4x4 --max-depth 9 --keep-levels last2" ;;
    *) echo "unknown job $1" >&2; exit 2 ;;
  esac
}

# Utilization over the levels of the last run: pool CPU seconds over
# threads × wall, summed over levels; then the share of thread time spent
# waiting for a worker's cache (its stripes' locks).
utilization() {
  python3 - "$1" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except OSError:
    print("- | -"); sys.exit()
busy = sum(l.get("busy_seconds", 0) for l in r["level_io"])
wait = sum(l.get("wait_seconds", 0) for l in r["level_io"])
avail = sum(l.get("threads", 0) * s for l, s in zip(r["level_io"], r["level_seconds"]))
print(f"{100 * busy / avail:.0f}% | {100 * wait / avail:.1f}%" if avail else "- | -")
PY
}

# Runs `cayley run ARGS` under the time limit; prints its wall seconds
# ("over" past the limit, "failed" on an error).
timed_run() { # NAME ARGS...
  local name=$1
  shift
  rm -rf "$work/out"
  local started=$(date +%s.%N)
  # `times` in the subshell gives, on its second line, the user and
  # system time of its children (timeout, and cayley, which timeout waits
  # for).
  (
    timeout "$LIMIT" "$cayley" run "$@" --memory "$MEMORY" -q --scratch "$work" --out "$work/out" > "$OUT/$name.log" 2>&1
    rc=$?
    times > "$OUT/$name.times"
    exit $rc
  )
  local rc=$?
  local wall=$(awk "BEGIN{print $(date +%s.%N) - $started}")
  # Cores the whole process kept busy: its CPU time over its wall time.
  # A run of N compute threads also has the coordinator, the workers'
  # gRPC and file threads and the startup's enumeration; a 1-thread run
  # on 2 cores does those on the second core.
  awk -v wall="$wall" 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); cpu += 60 * t[1] + t[2] } }
    END { printf "%.2f", cpu / wall }' "$OUT/$name.times" > "$OUT/$name.cores"
  cp "$work/out/result.json" "$OUT/$name.json" 2>/dev/null
  case $rc in
    0) printf '%.2f' "$wall" ;;
    124) echo over ;;
    *) echo failed ;;
  esac
}

# CPU seconds (user and system) of run NAME, from its `times`.
cpu_of() { # NAME
  awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); cpu += 60 * t[1] + t[2] } }
    END { printf "%.1f", cpu }' "$OUT/$1.times" 2>/dev/null || echo -
}

# K copies of `cayley run ARGS --threads 1` at once, each in its own
# scratch folder; prints the wall seconds until the last one ends.
copies() { # NAME K ARGS...
  local name=$1 k=$2
  shift 2
  local started=$(date +%s.%N) pids=() failed=0
  for ((i = 0; i < k; i++)); do
    rm -rf "$work/copy$i"
    mkdir -p "$work/copy$i"
    timeout "$LIMIT" "$cayley" run "$@" --threads 1 --memory "$MEMORY" -q --scratch "$work/copy$i" \
      --out "$work/copy$i/out" > "$OUT/$name-$i.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  rm -rf "$work"/copy*
  [ $failed = 0 ] && printf '%.2f' "$(awk "BEGIN{print $(date +%s.%N) - $started}")" || echo failed
}

# K `cayley-worker` processes of a `cayley serve` on this machine, the
# threads split evenly; prints the wall seconds of the serve.
served() { # NAME K JOB-ARGS...
  local name=$1 k=$2
  shift 2
  rm -rf "$work/ck" "$work/out"
  local port=$(( 20000 + RANDOM % 20000 ))
  local started=$(date +%s.%N)
  "$cayley" serve "$@" --listen "127.0.0.1:$port" --token bench --checkpoint-dir "$work/ck" \
    --out "$work/out" > "$OUT/$name.log" 2>&1 &
  local serve=$!
  local per=$(( cores / k )) mem=$(( ${MEMORY%G} / k ))
  for ((i = 0; i < k; i++)); do
    "$worker" --coordinator "http://127.0.0.1:$port" --token bench --threads "$per" \
      --memory "${mem}G" --patience 30 >> "$OUT/$name.workers.log" 2>&1 &
  done
  if timeout "$LIMIT" tail --pid=$serve -f /dev/null; then
    wait "$serve"
    local rc=$?
    cp "$work/out/result.json" "$OUT/$name.json" 2>/dev/null
    [ $rc = 0 ] && printf '%.2f' "$(awk "BEGIN{print $(date +%s.%N) - $started}")" || echo failed
  else
    kill "$serve" 2>/dev/null
    echo over
  fi
  wait 2>/dev/null
}

echo "machine: $cores cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), memory budget $MEMORY, scratch $SCRATCH, $(date -u +%F)"
echo "binary: $cayley ($("$cayley" --version))"
echo
# CPU s: the process's user and system time, each round. On a VM whose
# cores are sometimes slower together (the 2-core AMD VM's "slow rounds":
# docs/history.md, "Threads' clocks, slab stashes, and a profile for the
# lent machine"), a run at more threads that needs more CPU than the
# 1-thread run of its round shows it here.
echo "| job | threads | wall s$([ "$ROUNDS" -gt 1 ] && echo " (median of $ROUNDS)") | speed-up over 2 threads | threads busy | waiting for the cache | cores used | CPU s |"
echo "|---|---|---|---|---|---|---|---|"
# The median of its arguments (walls; "over" or "failed" when any is).
median() {
  printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} !/^[0-9.]+$/ {bad = $1}
    END {if (bad != "") print bad; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
# The ratios of two lists of walls round by round: "rounds: median M×,
# LO–HI×" (empty when a run of either failed).
round_ratios() { # BASE-WALLS WALLS
  # shellcheck disable=SC2086
  paste <(printf '%s\n' $1) <(printf '%s\n' $2) |
    awk '$1 !~ /^[0-9.]+$/ || $2 !~ /^[0-9.]+$/ {print "bad"; next} {print $1 / $2}' |
    sort -g | awk '/bad/ {bad = 1} {r[NR] = $1}
      END {
        if (bad || NR == 0) exit
        m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
        printf "rounds: median %.2f×, %.2f–%.2f×", m, r[1], r[NR]
      }'
}
declare -A ceilings=()
for job in ${JOBS:-2x6 4x4 3x5}; do
  read -r -a args <<< "$(args_of "$job")"
  declare -A walls=() runs=()
  declare -A together=()
  for ((round = 1; round <= ROUNDS; round++)); do
    for t in $THREADS; do
      runs[$t]="${runs[$t]:-} $(timed_run "$job-t$t-r$round" "${args[@]}" --threads "$t")"
    done
    for k in ${CEILING:-}; do
      together[$k]="${together[$k]:-} $(copies "$job-copies$k-r$round" "$k" "${args[@]}")"
    done
  done
  for t in $THREADS; do
    # shellcheck disable=SC2086
    walls[$t]=$(median ${runs[$t]})
  done
  for k in ${CEILING:-}; do
    # Round by round: K × the round's 1-thread wall over the K copies'.
    # shellcheck disable=SC2086
    per_copy=$(printf '%s\n' ${together[$k]} | awk -v k="$k" '/^[0-9.]+$/ {printf "%f\n", $1 / k; next} {print}')
    # shellcheck disable=SC2086
    ceilings[$job-$k]="$(median ${together[$k]})|$(round_ratios "${runs[1]:-}" "$per_copy")"
  done
  base=${walls[2]:-}
  for t in $THREADS; do
    w=${walls[$t]}
    speedup=-
    if [[ "$base" =~ ^[0-9.]+$ && "$w" =~ ^[0-9.]+$ ]]; then
      speedup=$(awk "BEGIN{printf \"%.2f×\", $base / $w}")
      # Within each round as well: the VM's speed drifts between rounds,
      # and a round's runs are minutes apart at most.
      if [ "$ROUNDS" -gt 1 ] && [ "$t" != 2 ]; then
        speedup="$speedup ($(round_ratios "${runs[2]}" "${runs[$t]}"))"
      fi
    fi
    shown=$w
    [ "$ROUNDS" -gt 1 ] && shown="$w (${runs[$t]# })"
    cpu=$(for ((round = 1; round <= ROUNDS; round++)); do cpu_of "$job-t$t-r$round"; echo -n " "; done)
    echo "| $job | $t | $shown | $speedup | $(utilization "$OUT/$job-t$t-r$ROUNDS.json") | $(cat "$OUT/$job-t$t-r$ROUNDS.cores" 2>/dev/null || echo -) | ${cpu% } |"
  done
  unset walls runs together
done
if [ -n "${CEILING:-}" ]; then
  echo
  echo "The machine's ceiling: K 1-thread runs at once, each its own process and checkpoint, in the same rounds"
  echo "(K × the round's 1-thread wall over the K runs' wall; needs THREADS to hold 1):"
  echo
  echo "| job | K | wall s of K at once$([ "$ROUNDS" -gt 1 ] && echo " (median of $ROUNDS)") | ceiling of K threads over 1 |"
  echo "|---|---|---|---|"
  for job in ${JOBS:-2x6 4x4 3x5}; do
    for k in $CEILING; do
      echo "| $job | $k | ${ceilings[$job-$k]%%|*} | ${ceilings[$job-$k]#*|} |"
    done
  done
fi
[ -n "${WORKERS-2 4}" ] || { echo; echo "logs and result.json of every run: $OUT"; exit 0; }
echo
echo "One machine's $cores threads as K workers (the 4×4 to depth 8), against one worker:"
echo
echo "| layout | wall s | threads busy | waiting for the cache |"
echo "|---|---|---|---|"
read -r -a args <<< "$(args_of 4x4)"
echo "| 1 worker × $cores threads | $(timed_run one "${args[@]}" --threads "$cores") | $(utilization "$OUT/one.json") |"
for k in ${WORKERS-2 4}; do
  [ "$k" -le "$cores" ] || continue
  echo "| \`--workers $k\` × $((cores / k)) threads | $(timed_run "workers$k" "${args[@]}" --workers "$k" --threads "$cores") | $(utilization "$OUT/workers$k.json") |"
  if [ -x "$worker" ]; then
    echo "| $k \`cayley-worker\` processes × $((cores / k)) threads | $(served "procs$k" "$k" "${args[@]}") | $(utilization "$OUT/procs$k.json") |"
  fi
done
echo
echo "logs and result.json of every run: $OUT"
