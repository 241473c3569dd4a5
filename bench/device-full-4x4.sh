#!/usr/bin/env bash
# The complete 4×4 Loopover MTM on every thread of a many-core machine, in one call of under
# ten minutes, checked against results/loopover-4x4-mtm (issue 32: "≤ 8 minutes on one 16-core
# machine"). The checkpoint goes to /dev/shm (about 40 GiB at its peak, plus --memory).
# It needs only the binary and python3. Layout: `bench/device-prepare.sh`; then, on the
# many-core machine with .dev/ copied there (carry: [".dev"]): bash .dev/device-full-4x4.sh
# Everything goes to $OUT (else /tmp/full): full.log (the run's log, its last line wall, CPU
# and peak RSS), mem.txt (/dev/shm and memory used every 5 s), machine.txt, result.json,
# depths.csv, antipodes.txt. LIM: seconds the run may take (480); MEM: --memory (50G);
# X: more options (a dry run on a small machine: X="--max-depth 7 --ignore-disk-check").
set -u
S=${OUT:-/tmp/full}; mkdir -p "$S"; C=$(cd "$(dirname "$0")" && pwd)/bin/cayley; chmod +x "$C"
R=$(pwd)/results/loopover-4x4-mtm
W=/dev/shm/full; rm -rf "$W"; mkdir -p "$W"
{ nproc; lscpu 2>/dev/null | grep -Ei "model name|socket|thread|numa|L2|L3"; free -g; df -h / /dev/shm; } > "$S/machine.txt" 2>&1
( while sleep 5; do echo "$(date +%s) shm $(du -sm $W 2>/dev/null | cut -f1) MiB, used $(free -m | awk '/Mem/{print $3}') MiB" >> "$S/mem.txt"; done ) & M=$!
python3 - timeout "${LIM:-480}" "$C" run loopover:4x4 --metric mtm --threads "$(nproc)" --memory "${MEM:-50G}" \
  --keep-levels last2 --antipodes 100000 --checkpoint-dir "$W/ck" --out "$W/out" ${X:-} <<'PY' 2>&1 | tee "$S/full.log"
import resource, subprocess, sys, time
t = time.time(); r = subprocess.run(sys.argv[1:]); w = time.time() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"WALL {w:.2f} s  CPU {u.ru_utime:.1f}+{u.ru_stime:.1f} s  RSS {u.ru_maxrss} KiB  rc {r.returncode}", flush=True)
PY
kill $M
cp "$W"/out/{result.json,depths.csv,antipodes.txt} "$S/" 2>/dev/null
echo "depths.csv: $(cmp "$W/out/depths.csv" "$R/depths.csv" && echo identical)"
echo "antipodes.txt: $(cmp "$W/out/antipodes.txt" "$R/antipodes.txt" && echo identical)"
rm -rf "$W"
