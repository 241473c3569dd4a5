#!/usr/bin/env bash
# The 4×4 Loopover's sparse levels against a dense reference, as a ratio of
# wall times taken together on one machine (docs/history.md, "Loopover 4×4"):
#   cayley run loopover:4x4 --max-depth 8 --memory 8G   (499,961 shards, sparse)
#   cayley run loopover:2x6 --no-symmetry                (block kernel, dense)
# both with --threads 2, each ROUNDS times (default 2), interleaved.
# Usage: bench/ratio-4x4.sh [CAYLEY ...]   (binaries to compare; default:
#   this tree's release build). Prints one line per run and the ratio of
#   the medians per binary. Checkpoints go to a temporary directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binaries=("$@")
if [ ${#binaries[@]} -eq 0 ]; then
  (cd "$root" && cargo build --release -q -p cayley-coordinator)
  binaries=("$root/target/release/cayley")
fi
rounds=${ROUNDS:-2}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
run() { # binary label args...
  local bin=$1 label=$2
  shift 2
  # A folder holding another job's results is refused (since 5e427e6).
  rm -rf "$scratch/out"
  /usr/bin/time -f '%e %M' -o "$scratch/time" "$bin" run "$@" --threads 2 \
    --scratch "$scratch" --out "$scratch/out" -q > /dev/null
  read -r wall rss < "$scratch/time"
  echo "$bin $label wall ${wall} s peak RSS $((rss / 1024)) MiB" >&2
  echo "$wall"
}
declare -A big small
for ((i = 0; i < rounds; i++)); do
  for bin in "${binaries[@]}"; do
    small[$bin]+="$(run "$bin" 2x6 loopover:2x6 --no-symmetry) "
    big[$bin]+="$(run "$bin" 4x4 loopover:4x4 --max-depth 8 --memory 8G) "
  done
done
for bin in "${binaries[@]}"; do
  python3 - "$bin" "${big[$bin]}" "${small[$bin]}" <<'PY'
import statistics, sys
bin, big, small = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
b, s = statistics.median(big), statistics.median(small)
print(f"{bin}: 4x4 --max-depth 8 {b:.1f} s, 2x6 --no-symmetry {s:.2f} s, ratio {b / s:.1f}")
PY
done
