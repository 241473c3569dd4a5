#!/usr/bin/env bash
# Lays out .dev/ for the many-core machine's scripts (bench/device-compare.sh,
# bench/device-full-4x4.sh): this tree's release `cayley` in .dev/bin with the
# first-touch probe and perf, the build of OLD (a commit, default 1145fc4: the one last
# measured on 16 cores, docs/history.md "On 16 cores, second call") in .dev/old,
# and the scripts. .dev/ is ignored by git and goes to the machine with
# `carry: [".dev"]`; then run `bash .dev/device-compare.sh` there.
# Usage: bench/device-prepare.sh [OLD]   (from anywhere in the repository)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
old=${1:-1145fc4}
cd "$root"
cargo build --release -q -p cayley-coordinator
mkdir -p .dev/bin .dev/old
cp target/release/cayley .dev/bin/
cc -O2 -pthread bench/first_touch.c -o .dev/bin/touch
tree=$(mktemp -d)/old
git worktree add -q --detach "$tree" "$old"
trap 'git worktree remove --force "$tree"' EXIT
# Its own target folder (inside target/, ignored), so this tree's build stays.
CARGO_TARGET_DIR="$root/target/device-old" cargo build --release -q -p cayley-coordinator --manifest-path "$tree/Cargo.toml"
cp "$root/target/device-old/release/cayley" .dev/old/
# This tree's commit with mimalloc's heap on transparent huge pages (without its `no_thp`
# feature), in .dev/thp: on 2 cores (1e466ec, before the last level's outputs were let go) the
# 4×4 to depth 8 took 115,000 → 5,000–8,000 page faults and 38–48 → 9 ms to exit, for 60–85 MB
# more peak RSS, and about 9 MB more a thread on small budgets (docs/history.md, "Serial set-up
# spread over the threads"); device-compare.sh runs it beside this build.
thp=$(mktemp -d)/thp
git worktree add -q --detach "$thp" HEAD
trap 'git worktree remove --force "$tree"; git worktree remove --force "$thp"' EXIT
sed -i 's/features = \["no_thp"\]/features = []/' "$thp/worker/Cargo.toml" "$thp/coordinator/Cargo.toml"
mkdir -p .dev/thp
CARGO_TARGET_DIR="$root/target/device-thp" cargo build --release -q -p cayley-coordinator --manifest-path "$thp/Cargo.toml"
cp "$root/target/device-thp/release/cayley" .dev/thp/
cp bench/device-compare.sh bench/device-full-4x4.sh bench/device-perf.sh .dev/
# perf, for bench/device-perf.sh there (the machine may have none): this machine's, with the
# libraries it loads besides glibc's, packed (about 30 MB, 8 MB packed; carry allows 64 MiB).
if command -v perf > /dev/null; then
  pack=$(mktemp -d); mkdir -p "$pack/perf/lib"
  bin=$(readlink -f "$(command -v perf)")
  cp "$bin" "$pack/perf/perf"
  ldd "$bin" | awk '/=> \//{print $3}' | grep -vE '/(libc|libm|libpthread|libdl|librt)\.so' \
    | xargs -r cp -L -t "$pack/perf/lib"
  tar cJf .dev/perf.tar.xz -C "$pack" perf
  rm -rf "$pack"
fi
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.dev/' "$exclude" 2>/dev/null || echo '/.dev/' >> "$exclude"
echo "new: $(git rev-parse --short HEAD) (and .dev/thp), old: $(git rev-parse --short "$old"); .dev/ holds $(du -sh .dev | cut -f1)"
