#!/usr/bin/env bash
# Where the thread-seconds go at N threads against 2: the 4×4 to depth 8 and the 2×6
# unreduced under `perf record` (CPU-clock samples, no call graphs) at each thread count, and
# each function's samples at N against its samples at 2. Same work, so a function that needs more samples at N is paying for
# the threads themselves: contended locks and atomics, memory shared between cores, wake-ups.
# On 16 cores (1145fc4), 16 threads spent 31 % more thread-seconds than 2 on depth 8
# (docs/history.md, "On 16 cores, second call"). This profile says where.
#
# perf is not on the many-core machine: `bench/device-prepare.sh` packs this machine's perf
# and the libraries it loads (besides glibc's) into .dev/perf.tar.xz. Unpacked here; perf
# runs with them. Without it, or when perf cannot record (perf_event_paranoid and no root),
# this prints why and exits 0.
# Usage: bash .dev/device-perf.sh [CAYLEY]   (default: .dev/bin/cayley beside it)
# Environment: JOBS ("4x4 2x6"), THREADS (N, default nproc), DEPTH (the 4×4's, 8), MEMORY
# (20G), SCRATCH (/dev/shm; the checkpoint of the 4×4 to depth 8 is a few GiB, so the disk
# check, which plans the whole 4×4, is skipped), OUT (a temp dir): for each job,
# perf-JOB-tN.txt and perf-JOB-t2.txt (flat profiles by function), perf-JOB-growth.txt (the
# comparison), each run's log and result.json.
set -u
D=$(cd "$(dirname "$0")" && pwd)
C=${1:-$D/bin/cayley}
N=${THREADS:-$(nproc)}; DEPTH=${DEPTH:-8}
S=${OUT:-$(mktemp -d)}; mkdir -p "$S"
P=$(mktemp -d)
if [ -f "$D/perf.tar.xz" ]; then
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$D/perf.tar.xz" "$P" \
    || { echo "perf: cannot unpack $D/perf.tar.xz"; exit 0; }
  perf() { LD_LIBRARY_PATH="$P/perf/lib" "$P/perf/perf" "$@"; }
elif ! command -v perf > /dev/null; then
  echo "perf: neither $D/perf.tar.xz nor perf on PATH; no profile"; exit 0
fi
W=$(mktemp -d "${SCRATCH:-/dev/shm}/cayley-perf.XXXXXX" 2> /dev/null || mktemp -d)
trap 'rm -rf "$W" "$P"' EXIT
if ! perf record -e cpu-clock -o "$W/probe.data" -- true > "$S/perf-probe.log" 2>&1; then
  echo "perf: cannot record here: $(tail -3 "$S/perf-probe.log" | tr '\n' ' ')"; exit 0
fi
for job in ${JOBS:-4x4 2x6}; do
  case $job in
    4x4) what=(loopover:4x4 --max-depth "$DEPTH" --keep-levels last2) ;;
    2x6) what=(loopover:2x6 --no-symmetry) ;;
    *) echo "perf: unknown job $job"; continue ;;
  esac
  for t in "$N" 2; do
    rm -rf "$W/ck" "$W/out"
    perf record -e cpu-clock -F 999 -o "$W/t.data" -- "$C" run "${what[@]}" --threads "$t" \
      --memory "${MEMORY:-20G}" -q --checkpoint-dir "$W/ck" --out "$W/out" --ignore-disk-check \
      > "$S/perf-$job-run-t$t.log" 2>&1
    cp "$W/out/result.json" "$S/perf-$job-t$t.json" 2> /dev/null
    perf report -i "$W/t.data" --no-children --sort symbol -n --stdio --percent-limit 0.05 \
      > "$S/perf-$job-t$t.txt" 2> /dev/null
    rm -f "$W/t.data"
  done
  echo "$job:"
  python3 - "$S/perf-$job-t$N.txt" "$S/perf-$job-t2.txt" "$N" <<'PY' | tee "$S/perf-$job-growth.txt"
import re, sys
def samples(path):
    out = {}
    for line in open(path, errors="replace"):
        m = re.match(r"\s*([\d.]+)%\s+(\d+)\s+\[(.)\]\s+(.*?)\s*$", line)
        if m:
            # Some perf builds add IPC columns after the name ("-      -").
            name = re.split(r"\s{2,}", m.group(4))[0]
            out[name] = out.get(name, 0) + int(m.group(2))
    return out
many, two, n = samples(sys.argv[1]), samples(sys.argv[2]), sys.argv[3]
total_many, total_two = sum(many.values()), sum(two.values())
if not total_many or not total_two:
    sys.exit("perf: no samples")
print(f"samples (1 ms of CPU each): {total_many} at {n} threads, {total_two} at 2 ({total_many / total_two:.2f}x)")
print(f"the functions whose samples grew most, {n} threads against 2:")
rows = sorted(set(many) | set(two), key=lambda f: -(many.get(f, 0) - two.get(f, 0)))
for f in rows[:20]:
    print(f"{many.get(f, 0) - two.get(f, 0):+7d}  {many.get(f, 0):7d} {two.get(f, 0):7d}  {f[:110]}")
PY
done
