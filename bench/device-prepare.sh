#!/usr/bin/env bash
# Lays out .dev/ for the many-core machine's scripts (bench/device-compare.sh,
# bench/device-full-4x4.sh): this tree's release `cayley` in .dev/bin with the
# first-touch probe and perf, the build of OLD (a commit, default 1145fc4: the one last
# measured on 16 cores, docs/history.md "On 16 cores, second call") in .dev/old,
# and this tree with one change each in .dev/thp and .dev/nofrozen (see `variant` below),
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
worktrees=$tree
trap 'for w in $worktrees; do git worktree remove --force "$w"; done' EXIT
# Its own target folder (inside target/, ignored), so this tree's build stays.
CARGO_TARGET_DIR="$root/target/device-old" cargo build --release -q -p cayley-coordinator --manifest-path "$tree/Cargo.toml"
cp "$root/target/device-old/release/cayley" .dev/old/
# This tree's commit with one change, built into .dev/NAME (stripped: carry allows 64 MiB).
variant() { # NAME SED-SCRIPT FILE...: each FILE (of the tree) must change
  local name=$1 script=$2 dir f; shift 2
  dir=$(mktemp -d)/$name
  git worktree add -q --detach "$dir" HEAD
  worktrees="$worktrees $dir"
  for f in "$@"; do
    cp "$dir/$f" "$dir/$f.orig"
    sed -i "$script" "$dir/$f"
    if cmp -s "$dir/$f" "$dir/$f.orig"; then echo "$name: $f did not change" >&2; exit 1; fi
  done
  mkdir -p ".dev/$name"
  CARGO_TARGET_DIR="$root/target/device-$name" cargo build --release -q -p cayley-coordinator --manifest-path "$dir/Cargo.toml"
  cp "$root/target/device-$name/release/cayley" ".dev/$name/"
  strip ".dev/$name/cayley" 2>/dev/null || true
}
strip .dev/old/cayley 2>/dev/null || true
# mimalloc's heap on transparent huge pages (without its `no_thp` feature), in .dev/thp: on 2
# cores (1e466ec, before the last level's outputs were let go) the 4×4 to depth 8 took 115,000 →
# 5,000–8,000 page faults and 38–48 → 9 ms to exit, for 60–85 MB more peak RSS, and about 9 MB
# more a thread on small budgets (docs/history.md, "Serial set-up spread over the threads").
variant thp 's/features = \["no_thp"\]/features = []/' worker/Cargo.toml coordinator/Cargo.toml
# Every source looked up through the cache's stripes, as before the level read was held still
# for its tasks (worker/src/runner/frozen.rs), in .dev/nofrozen: three cache lines written per
# lookup that 16 threads take turns on, and none of the held level's bit a shard for empty
# sources or its prefetches (on 2 cores those two made a 1-thread 4×4 to depth 8 about 10 %
# faster, docs/history.md "Sources prefetched, empty shards by bit").
variant nofrozen 's/^    fn freeze(&self, level: u32, table: Vec<Option<Bits>>, may_hold: Option<&\[u64\]>) -> Option<FrozenLevel> {$/&\n        if true { drop(table); return None; }/' \
  worker/src/runner/level.rs
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
echo "new: $(git rev-parse --short HEAD) (and .dev/thp, .dev/nofrozen), old: $(git rev-parse --short "$old"); .dev/ holds $(du -sh .dev | cut -f1)"
