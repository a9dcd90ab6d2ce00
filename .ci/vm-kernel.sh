#!/usr/bin/env bash
# Prepare the kernel that tests/ublk_vm.rs boots under QEMU: Debian's newest
# linux-image 6.12 (or later) built with ublk_drv, unpacked without
# installing it. Writes DIR/vmlinuz and DIR/ublk_drv.ko (default
# /var/cache/ssdready/vm-kernel); does nothing when they are there.
set -euo pipefail
dir=${1:-/var/cache/ssdready/vm-kernel}
[ -f "$dir/vmlinuz" ] && [ -f "$dir/ublk_drv.ko" ] && exit 0
newest() {
  apt-cache search --names-only '^linux-image-6\.(1[2-9]|[2-9][0-9])\.[0-9.]+\+deb[0-9]+-amd64-unsigned$' |
    awk '{print $1}' | sort -V | tail -1
}
pkg=$(newest)
# A fresh machine may have no package lists yet.
[ -n "$pkg" ] || { apt-get update -qq && pkg=$(newest); }
[ -n "$pkg" ] || { echo "vm-kernel: no linux-image 6.12+ package found" >&2; exit 1; }
tmp=$(mktemp -d)
chmod 777 "$tmp" # apt-get download writes as _apt
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -qq "$pkg" >/dev/null)
dpkg-deb -x "$tmp"/*.deb "$tmp/x"
ko=$(find "$tmp/x" -name 'ublk_drv.ko*' | head -1)
[ -n "$ko" ] || { echo "vm-kernel: $pkg has no ublk_drv" >&2; exit 1; }
mkdir -p "$dir"
case "$ko" in
  *.xz) xz -dc "$ko" >"$dir/ublk_drv.ko.tmp" ;;
  *.zst) zstd -qdc "$ko" >"$dir/ublk_drv.ko.tmp" ;;
  *) cp "$ko" "$dir/ublk_drv.ko.tmp" ;;
esac
cp "$tmp"/x/boot/vmlinuz-* "$dir/vmlinuz.tmp"
mv "$dir/ublk_drv.ko.tmp" "$dir/ublk_drv.ko"
mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
echo "$pkg" >"$dir/package"
