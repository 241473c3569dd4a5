#!/usr/bin/env bash
# cayley on the largest Cayley graph of each family that CayleyPy publishes
# a growth table of (tests/data/cayleypy-growth.csv, with its source): wall
# time and peak RSS of `cayley run SPEC --threads 2` (/usr/bin/time, whole
# process), and whether the table equals CayleyPy's depth by depth.
# BENCHMARKS.md, "Against CayleyPy's published tables", keeps the results.
#
# Usage: bench/cayleypy.sh [SPEC ...]
#   SPEC   family specs to run (default: the list below, each under a
#          minute here; pancake:13, pancake:14 (results/pancake-14) and
#          lrx:14, 14! states each, take from minutes to hours)
# Environment:
#   CAYLEY=PATH  the cayley binary (default: target/release/cayley, built)
#   THREADS=N    --threads (default 2)
#   OUT=DIR      where outputs go (default bench/out/cayleypy)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
if [ -z "${CAYLEY:-}" ]; then
  nice -n 19 cargo build --release -q -p cayley-coordinator
  CAYLEY=target/release/cayley
fi
THREADS=${THREADS:-2}
OUT=${OUT:-bench/out/cayleypy}
mkdir -p "$OUT"
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(pancake:12 burnt-pancake:9 cyclic-coxeter:13 reversals:10 top-spin:9 lrx:9 coxeter:7)
echo "| graph | states | diameter | wall | peak RSS | = CayleyPy |"
echo "|---|---|---|---|---|---|"
for spec in "${specs[@]}"; do
  name=${spec//:/-}
  rm -rf "${OUT:?}/$name"
  if ! /usr/bin/time -f '%e %M' -o "$OUT/$name.time" "$CAYLEY" run "$spec" --threads "$THREADS" -q \
    --out "$OUT/$name" > "$OUT/$name.log" 2>&1; then
    echo "| \`$spec\` | failed: see $OUT/$name.log |||||"
    continue
  fi
  read -r wall rss_kb < "$OUT/$name.time"
  python3 - "$spec" "$OUT/$name/result.json" "$wall" "$rss_kb" <<'EOF'
import json, sys
spec, result, wall, rss_kb = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
depths = json.load(open(result))["depths"]
published = None
for line in open("tests/data/cayleypy-growth.csv"):
    if line.startswith(spec + ","):
        published = [int(c) for c in line.split(",", 1)[1].split()]
same = "no table" if published is None else ("yes" if published == depths else "NO")
print(f"| `{spec}` | {sum(depths):,} | {len(depths) - 1} | {wall:.2f} s | {rss_kb / 1024:.0f} MiB | {same} |")
EOF
done
