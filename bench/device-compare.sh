#!/usr/bin/env bash
# Two builds on a many-core machine in one call of under ten minutes: the 4×4 to depth 8 at
# every thread and at 2, each build, on cold memory first and then on memory touched once
# (a fresh VM backs guest memory on first use: docs/history.md, "On 16 cores, measured"),
# the 2×6 unreduced twice (and once cut into 12 shards, the old plan), the 4×4 to depth 9 at every
# thread and at 2 (a job whose fixed costs are about a fortieth of it), `--workers 4`, a profile of
# the 4×4 at N threads against 2 (bench/device-perf.sh), a deeper 4×4 and the 3×5 at every
# thread, and the machine's ceiling (the 4×4 as 2 and as N 1-thread processes).
# It needs only the binaries and python3. Layout: `bench/device-prepare.sh [OLD]` (this tree's
# build in .dev/bin, OLD's in .dev/old, this build with its heap on huge pages in .dev/thp and
# with every source looked up through the cache in .dev/nofrozen, the first-touch probe, these
# scripts); then, on the
# many-core machine with .dev/ copied there (carry: [".dev"]): bash .dev/device-compare.sh
# Everything goes to $OUT (else a temp dir): summary.txt and logs.tar.gz (each run's log and
# result.json). LIMIT: seconds for everything (540); TOUCH: GiB touched (48); THREADS (nproc);
# SMALL=1: shallow jobs (a dry run on a small machine). OLD: the build last measured on 16 cores
# (1145fc4 on 2026-11-28, docs/history.md "On 16 cores, second call").
set -u
START=$(date +%s); LIMIT=${LIMIT:-540}
D=$(cd "$(dirname "$0")" && pwd); NEW=$D/bin/cayley; OLD=$D/old/cayley; THP=$D/thp/cayley
NOFROZEN=$D/nofrozen/cayley
chmod +x "$D"/bin/* "$D"/old/* "$D"/thp/* "$D"/nofrozen/* 2>/dev/null
N=${THREADS:-$(nproc)}
S=${OUT:-$(mktemp -d)}; L=$S/logs; mkdir -p "$L"
D8=8; D9=9; D10=10; X5=10; TOUCH=${TOUCH:-48}; BIG=50G
[ "${SMALL:-0}" = 1 ] && { D8=5; D9=6; D10=6; X5=6; TOUCH=2; BIG=8G; }
# The clock source: a worker reads the clock six times a shard (its phases), 2 % of a 2-core
# profile through the vDSO with the TSC; a source without a vDSO path makes each a system call.
{ uname -a; nproc; free -g; df -h / /dev/shm; echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
  echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"; } > "$L/machine.txt" 2>&1
grep -E "THP|clocksource" "$L/machine.txt" >> "$S/summary.txt"
W=/dev/shm/cayley-call2; rm -rf "$W"; mkdir -p "$W"
left() { echo $(( LIMIT - ($(date +%s) - START) )); }
tm() { # NAME CMD...: wall, user+sys CPU and peak RSS of the child; its result.json kept
  local n=$1; shift
  rm -rf "$W/out" "$W/ck"
  python3 - "$@" > "$L/$n.log" 2>&1 <<'PY'
import resource, subprocess, sys, time
t = time.time(); r = subprocess.run(sys.argv[1:]); w = time.time() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"WALL {w:.2f} s  CPU {u.ru_utime:.1f}+{u.ru_stime:.1f} s  RSS {u.ru_maxrss} KiB  rc {r.returncode}")
PY
  cp "$W/out/result.json" "$L/$n.json" 2>/dev/null
  echo "$n: $(tail -1 "$L/$n.log")  [$(grep -a "^depth *$D8:" "$L/$n.log" | sed 's/.*(thread s: //')]" | tee -a "$S/summary.txt"
}
d8() { # NAME BINARY THREADS [ARGS]
  local n=$1 b=$2 t=$3; shift 3
  tm "$n" timeout 150 "$b" run loopover:4x4 --max-depth $D8 --keep-levels last2 --threads "$t" --memory 20G --checkpoint-dir "$W/ck" --out "$W/out" "$@"
}
d8 cold_new_t$N "$NEW" $N
echo "touch: $(timeout 90 "$D/bin/touch" $TOUCH $N 1)" | tee -a "$S/summary.txt"
echo "touch again: $(timeout 60 "$D/bin/touch" $TOUCH $N 1)" | tee -a "$S/summary.txt"
d8 new_t$N "$NEW" $N
d8 old_t$N "$OLD" $N
d8 new_t2 "$NEW" 2
for t in $N 2 $N 2; do
  tm lo26_new_t$t timeout 60 "$NEW" run loopover:2x6 --no-symmetry --threads $t --memory 20G --out "$W/out" --checkpoint-dir "$W/ck"
done
tm lo26_old_t$N timeout 60 "$OLD" run loopover:2x6 --no-symmetry --threads $N --memory 20G --out "$W/out" --checkpoint-dir "$W/ck"
# The 4×4 to depth 9 at N threads and at 2: a job whose fixed costs (the set-up, depths 1-6, the
# end: about 0.4 s of a 2-thread run on the 2-core VM that 1 thread to 2 hardly shortens) are a
# fortieth of its 2-thread wall instead of a tenth (2-core VM, c41fb24: 17.4-17.7 s at 2 threads,
# 33.9-35.3 s at 1; the 4×4 to depth 8 4.3-4.5 s at 2). Its depths 8 and 9 are levels the issue
# asks 6× of (docs/history.md, "Fixed costs a 16-thread run cannot shorten").
for t in $N 2; do
  tm d9_new_t$t timeout 150 "$NEW" run loopover:4x4 --max-depth $D9 --keep-levels last2 --threads $t --memory $BIG --checkpoint-dir "$W/ck" --out "$W/out"
done
# The machine's own ceiling for N threads over 2: the 4×4 at 1 thread as 2 and as N separate
# processes at once, each its own checkpoint. (N/2) × the 2 copies' wall over the N copies' is
# what N threads could reach over 2 sharing nothing but the machine (clock, caches, memory).
copies() { # K
  local k=$1 s i
  s=$(date +%s.%N)
  for ((i = 0; i < k; i++)); do
    rm -rf "$W/c$i"
    timeout 150 "$NEW" run loopover:4x4 --max-depth $D8 --keep-levels last2 --threads 1 --memory 4G -q \
      --checkpoint-dir "$W/c$i" --out "$W/c$i/out" > "$L/copies$k-$i.log" 2>&1 &
  done
  wait
  echo "copies$k: WALL $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $s}") s" | tee -a "$S/summary.txt"
  rm -rf "$W"/c*
}
copies 2
copies $N
# The 2×6 cut into 12 shards, as before `layout::MIN_SHARDS` (its default is now 132 shards in
# 17 tasks: 28 shards in flight on 16 threads instead of 4; on 2 cores both cuts take the same
# time: docs/history.md, "Enough shards for a node's threads").
for t in $N 2; do
  tm lo26sp1_new_t$t timeout 60 "$NEW" run loopover:2x6 --no-symmetry --shard-pieces 1 --threads $t --memory 20G --out "$W/out" --checkpoint-dir "$W/ck"
done
d8 new_w4 "$NEW" $N --workers 4
# The heap on transparent huge pages (device-prepare.sh): fewer faults and a shorter exit, for
# some RSS; which way it goes on N cores decides mimalloc's `no_thp` feature.
[ -x "$THP" ] && d8 thp_t$N "$THP" $N
[ -x "$THP" ] && tm lo26_thp_t$N timeout 60 "$THP" run loopover:2x6 --no-symmetry --threads $N --memory 20G --out "$W/out" --checkpoint-dir "$W/ck"
# Sources through the cache's stripes, as before the level read was held still (device-prepare.sh):
# three cache lines written per lookup, which N threads take turns on; the same on 2 cores.
[ -x "$NOFROZEN" ] && d8 nofrozen_t$N "$NOFROZEN" $N
d8 new2_t$N "$NEW" $N
d8 old2_t$N "$OLD" $N
echo "left: $(left) s" | tee -a "$S/summary.txt"
# Where N threads' extra thread-seconds go: the 4×4 to depth 8 under perf at N and at 2
# threads (bench/device-perf.sh, with the perf that device-prepare.sh packs); profiles in perf/.
[ "$(left)" -gt 220 ] && OUT=$S/perf DEPTH=$D8 timeout $(( $(left) - 130 )) bash "$D/device-perf.sh" "$NEW" 2>&1 \
  | head -50 | tee -a "$S/summary.txt"
[ "$(left)" -gt 130 ] && tm d10_new_t$N timeout $(( $(left) - 100 )) "$NEW" run loopover:4x4 --max-depth $D10 --keep-levels last2 --threads $N --memory $BIG --checkpoint-dir "$W/ck" --out "$W/out"
grep -a "^depth" "$L/d10_new_t$N.log" 2>/dev/null | tail -4 >> "$S/summary.txt"
[ "$(left)" -gt 40 ] && tm x35_new_t$N timeout $(( $(left) - 25 )) "$NEW" run loopover:3x5 --max-depth $X5 --threads $N --memory 20G --checkpoint-dir "$W/ck" --out "$W/out"
[ "$(left)" -gt 75 ] && d8 new3_t2 "$NEW" 2
echo "total $(( $(date +%s) - START )) s" | tee -a "$S/summary.txt"
# Each level's wall at every thread against 2 threads, the 4×4's (the issue asks for 6× from
# depth 8) and the 2×6's (whose small levels took most of its 16-thread wall on 2026-11-28).
python3 - "$L" "$N" <<'PY' | tee -a "$S/summary.txt"
import re, sys
logs, n = sys.argv[1], sys.argv[2]
def walls(name):
    try:
        text = open(f"{logs}/{name}.log", errors="replace").read()
    except OSError:
        return {}
    return {int(d): float(w) for d, w in re.findall(r"^depth +(\d+): +\d+ states +([\d.]+) s", text, re.M)}
summary = open(f"{logs}/../summary.txt", errors="replace").read()
copies = dict(re.findall(r"^copies(\d+): WALL ([\d.]+) s", summary, re.M))
if "2" in copies and n in copies:
    ceiling = int(n) / 2 * float(copies["2"]) / float(copies[n])
    print(f"ceiling of {n} threads over 2 (separate 1-thread processes): {ceiling:.1f}x")
# What does not shrink with the threads (docs/history.md, "Lease requests held, and where a
# 16-thread run's fixed time goes"): the run's wall outside its levels (set-up before depth 1,
# the antipodes and result files after the last) and its small levels, at every thread and at 2.
import json
def fixed(name):
    try:
        wall = float(re.search(r"^WALL ([\d.]+) s", open(f"{logs}/{name}.log").read(), re.M).group(1))
        levels = json.load(open(f"{logs}/{name}.json"))["level_seconds"]
    except (OSError, AttributeError, KeyError, ValueError):
        return None
    return wall - sum(levels), sum(levels[1:7])
for job, prefix in (("4x4 to depth 8", ""), ("4x4 to depth 9", "d9_"), ("2x6 unreduced", "lo26_")):
    for build, t in (("new", n), ("new", "2"), ("thp", n), ("nofrozen", n)):
        f = fixed(f"{prefix}{build}_t{t}")
        if f:
            print(f"{job}, {build}, {t} threads: {f[0]:.2f} s outside the levels, {f[1]:.2f} s in depths 1-6")
for job, prefix in (("4x4 to depth 8", ""), ("4x4 to depth 9", "d9_"), ("2x6 unreduced", "lo26_"), ("2x6 in 12 shards", "lo26sp1_")):
    many, two = walls(f"{prefix}new_t{n}"), walls(f"{prefix}new_t2")
    print(f"{job}, each level:")
    for d in sorted(many):
        if d in two and many[d] > 0:
            print(f"depth {d}: {many[d]:.2f} s at {n} threads, {two[d]:.2f} s at 2, {two[d] / many[d]:.1f}x")
PY
tar czf "$S/logs.tar.gz" -C "$S" logs && rm -rf "$L"
rm -rf "$W"
