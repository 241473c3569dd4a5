#!/usr/bin/env bash
# The checkpoint on a network filesystem (docs/history.md, "The checkpoint on sshfs"): an sshd of this script's
# own on 127.0.0.1 exports a directory on the local disk and sshfs mounts it
# (as tests/tests/cluster_failures/network_fs.rs does). Measures, for the local path and the
# mount: sequential write+fsync and read of 256 MiB (dd), and a job
# (`cayley serve` + one `cayley-worker`, 2 threads) whose worker reads and
# writes the checkpoint through that path: wall time and checkpoint bytes
# written per second. Needs root, openssh-server and sshfs.
# Usage: bench/netfs.sh [PUZZLE_ARGS...]   (default: loopover:2x6 --no-symmetry)
# Environment: MEMORY, the worker's --memory (default 160M: it then reads most
# inputs back from the checkpoint); PAIRS (2), local/sshfs jobs interleaved.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p cayley-coordinator -p cayley-worker
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(loopover:2x6 --no-symmetry)
memory=${MEMORY:-160M} pairs=${PAIRS:-2}
bin=$PWD/target/release
dir=$(mktemp -d /var/tmp/cayley-netfs-XXXXXX)
port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
mkdir -p "$dir/export" "$dir/mount" /run/sshd
for k in host_key client_key; do ssh-keygen -q -t ed25519 -N "" -f "$dir/$k"; done
cp "$dir/client_key.pub" "$dir/authorized_keys"
cat > "$dir/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
Subsystem sftp internal-sftp
CONF
/usr/sbin/sshd -D -e -f "$dir/sshd_config" 2> "$dir/sshd.log" &
sshd=$!
cleanup() { fusermount3 -u "$dir/mount" 2>/dev/null || true; kill "$sshd" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
sshfs "root@127.0.0.1:$dir/export" "$dir/mount" \
  -o "port=$port,IdentityFile=$dir/client_key,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,LogLevel=ERROR"

dd_rate() { # $1 = directory: write+fsync then read 256 MiB, MB/s each
  local w r
  w=$(dd if=/dev/zero of="$1/dd" bs=1M count=256 conv=fsync 2>&1 | awk '/copied/ {print $(NF-1), $NF}')
  sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
  r=$(dd if="$1/dd" of=/dev/null bs=1M 2>&1 | awk '/copied/ {print $(NF-1), $NF}')
  rm -f "$1/dd"
  echo "write+fsync $w, read $r"
}

job() { # $1 = label, $2 = the worker's view of the export
  local label=$1 view=$2 start end coord
  rm -rf "$dir/export/ck" "$dir/export/out"
  start=$(date +%s.%N)
  $bin/cayley serve "${args[@]}" --listen "127.0.0.1:0" --token t -q --checkpoint-dir "$dir/export/ck" \
    --out "$dir/export/out" > /dev/null 2> "$dir/serve.log" &
  coord=$!
  for _ in $(seq 200); do grep -q serving "$dir/serve.log" 2>/dev/null && break; sleep 0.05; done
  url=$(sed -n 's/.* on \(http:[^;]*\);.*/\1/p' "$dir/serve.log")
  $bin/cayley-worker --coordinator "$url" --token t --threads 2 --memory "$memory" --checkpoint-dir "$view/ck" 2> "$dir/worker.log"
  wait "$coord"
  end=$(date +%s.%N)
  python3 - "$label" "$dir/export/ck/manifest.json" "$start" "$end" <<'PY'
import json, sys
label, manifest, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
m = json.load(open(manifest))
written = sum(l["bytes"] for l in m["levels"])
read = sum(l.get("io", {}).get("bytes_read", 0) for l in m["levels"])
wall = end - start
print(f"{label:>6}: job {wall:6.2f} s, {written / 1e6:7.1f} MB written ({written / 1e6 / wall:5.1f} MB/s), "
      f"{read / 1e6:7.1f} MB read back; depths {len(m['levels']) - 1}")
PY
}

echo "local disk: $(dd_rate "$dir/export")"
echo "sshfs:      $(dd_rate "$dir/mount")"
for _ in $(seq "$pairs"); do
  job local "$dir/export"
  job sshfs "$dir/mount"
done
