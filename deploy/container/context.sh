#!/bin/bash
# Assembles the build context of deploy/Dockerfile from binaries built on this
# machine, so the image builds without pulling anything from a registry:
#
#   cargo build --release -p cayley-coordinator -p cayley-worker
#   deploy/container/context.sh target/release /tmp/cayley-image
#   podman build -f deploy/Dockerfile -t localhost/cayley /tmp/cayley-image
#   (or: docker build -f deploy/Dockerfile -t localhost/cayley /tmp/cayley-image)
#
# The context holds rootfs/ (the binaries without their debug info, the shared
# libraries ldd names for them, a static busybox as /bin/sh and its applets,
# cayley-serve, passwd/group/nsswitch) and owned/ (directories owned by the
# image's user, uid 10001). Needs ldd and /bin/busybox (Debian: busybox-static);
# objcopy (binutils) is used to drop debug info when present.
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 BIN_DIR CONTEXT_DIR" >&2; exit 2; }
BIN=$1
CTX=$2
HERE=$(cd "$(dirname "$0")" && pwd)
BUSYBOX=${BUSYBOX:-/bin/busybox}
for b in cayley cayley-worker; do
  [ -x "$BIN/$b" ] || { echo "$0: $BIN/$b is missing; build it first" >&2; exit 1; }
done
[ -x "$BUSYBOX" ] || { echo "$0: $BUSYBOX is missing (apt-get install busybox-static)" >&2; exit 1; }

rm -rf "$CTX"
ROOT=$CTX/rootfs
mkdir -p "$ROOT/usr/local/bin" "$ROOT/bin" "$ROOT/etc" "$ROOT/home" "$CTX/owned/data" "$CTX/owned/home"
install -d -m 1777 "$ROOT/tmp"

for b in cayley cayley-worker; do
  if command -v objcopy >/dev/null; then
    objcopy --strip-debug "$BIN/$b" "$ROOT/usr/local/bin/$b"
  else
    cp "$BIN/$b" "$ROOT/usr/local/bin/$b"
  fi
  chmod 0755 "$ROOT/usr/local/bin/$b"
done
install -m 0755 "$HERE/cayley-serve" "$ROOT/usr/local/bin/cayley-serve"

# Every shared library the binaries load, at the path the loader looks for it
# (absolute paths from ldd, symlinks resolved).
ldd "$BIN/cayley" "$BIN/cayley-worker" | grep -oE '/[^ ]+\.so[^ ]*' | sort -u | while read -r lib; do
  mkdir -p "$ROOT$(dirname "$lib")"
  cp -L "$lib" "$ROOT$lib"
done

cp "$BUSYBOX" "$ROOT/bin/busybox"
for applet in $("$BUSYBOX" --list); do
  [ -e "$ROOT/bin/$applet" ] || ln -s busybox "$ROOT/bin/$applet"
done

cat > "$ROOT/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
cayley:x:10001:10001:cayley:/home/cayley:/bin/sh
EOF
cat > "$ROOT/etc/group" <<'EOF'
root:x:0:
cayley:x:10001:
EOF
echo 'hosts: files dns' > "$ROOT/etc/nsswitch.conf"
echo "context ready in $CTX ($(du -sh "$CTX" | cut -f1))"
