#!/usr/bin/env bash
# Prepare the kernel that the virtual-machine tests boot under QEMU
# (tests/ublk_vm.rs, the lab VM of bench/lab-vm.sh and tests/lab_vm.rs):
# Debian's newest linux-image 6.12 (or later), unpacked without installing it.
# Writes, in DIR (default /var/cache/ssdready/vm-kernel):
#   vmlinuz           the kernel
#   vmlinux           the same, uncompressed (an ELF with a PVH entry: QEMU
#                     starts it without the decompressor, about 2 s sooner
#                     under emulation); absent where it cannot be extracted
#   ublk_drv.ko       the ublk driver (where the ublk test expects it)
#   modules/NAME.ko   the lab's modules and what they need, decompressed,
#                     named as the kernel names them ('-' written '_')
#   modules/deps      one line per module: NAME: what must be loaded first
#   modules/order     every module once, each after what it needs
#   package           the Debian package it all came from
# The package has no modules.dep: what a module needs comes from its
# `depends=` and `softdep pre:` (modinfo), plus what it asks the kernel for
# at run time without saying so (EXTRA below). Does nothing when all is
# there for the current list of modules.
set -euo pipefail
dir=${1:-/var/cache/ssdready/vm-kernel}
# The modules the lab offers (see docs/lab-vm.md).
WANTED="null_blk nvme md_mod raid0 raid1 raid10 raid456 dm_mod dm_delay dm_crypt
  scsi_debug sd_mod brd 9p 9pnet_virtio nvmet nvme_loop crc32c_generic xts aesni_intel"
# Needs no module declares: raid456's libcrc32c asks for the crc32c
# algorithm; scsi_debug's disks need the SCSI disk driver to show as sdX;
# dm-crypt's aes-xts cipher needs xts and AES; 9p mounts over virtio.
EXTRA="libcrc32c:crc32c_generic scsi_debug:sd_mod dm_crypt:xts,aesni_intel 9p:9pnet_virtio"
# What a complete directory holds (vmlinux, then the modules' lists).
wanted_line="vmlinux $(echo $WANTED $EXTRA)"
if [ -f "$dir/vmlinuz" ] && [ -f "$dir/ublk_drv.ko" ] && [ -f "$dir/modules/order" ] &&
  [ "$(cat "$dir/modules/wanted" 2>/dev/null)" = "$wanted_line" ]; then
  exit 0
fi
for tool in apt-get dpkg-deb modinfo xz; do
  command -v "$tool" >/dev/null || { echo "vm-kernel: needs $tool" >&2; exit 1; }
done
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
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
stage="$dir/.new.$$"
trap 'rm -rf "$tmp" "$stage"' EXIT
(cd "$tmp" && apt-get download -qq "$pkg" >/dev/null)
dpkg-deb -x "$tmp"/*.deb "$tmp/x"
mkdir -p "$stage/modules"

# name -> the packaged file, for every module in the package.
declare -A file
while IFS= read -r f; do
  n=$(basename "$f")
  n=${n%%.ko*}
  file[${n//-/_}]=$f
done < <(find "$tmp/x/lib/modules" -name '*.ko*')

# The ELF inside a bzImage: its zstd or xz payload, decompressed, kept only
# when whole (its section headers end within the file).
extract_vmlinux() { # BZIMAGE DEST
  local magic off shoff size
  for magic in '\x28\xb5\x2f\xfd' '\xfd\x37\x7a\x58\x5a\x00'; do
    off=$(LC_ALL=C grep -obUaP "$magic" "$1" | head -1 | cut -d: -f1)
    [ -n "$off" ] || continue
    case "$magic" in
      *28*) tail -c +$((off + 1)) "$1" | zstd -qdc >"$2" 2>/dev/null || true ;;
      *) tail -c +$((off + 1)) "$1" | xz -qdc >"$2" 2>/dev/null || true ;;
    esac
    [ "$(head -c 4 "$2" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] || continue
    shoff=$(od -An -tu8 -j 40 -N 8 "$2" | tr -d ' ')
    size=$(od -An -tu2 -j 58 -N 4 "$2" | awk '{print $1 * $2}')
    [ $((shoff + size)) -le "$(stat -c %s "$2")" ] && return 0
  done
  rm -f "$2"
  return 1
}

unpack() { # FILE DEST
  case "$1" in
    *.xz) xz -dc "$1" >"$2" ;;
    *.zst) zstd -qdc "$1" >"$2" ;;
    *) cp "$1" "$2" ;;
  esac
}

declare -A extra needs state
for e in $EXTRA; do extra[${e%%:*}]=${e#*:}; done
order=()
# Depth first: a module goes into the order after everything it needs.
visit() {
  local m=$1 d f
  case "${state[$m]:-}" in done) return ;; busy) echo "vm-kernel: $m needs itself" >&2; exit 1 ;; esac
  f=${file[$m]:-}
  [ -n "$f" ] || { echo "vm-kernel: $pkg has no module $m" >&2; exit 1; }
  state[$m]=busy
  local deps=()
  for d in $(modinfo -F depends "$f" | tr ',' ' ') $(echo "${extra[$m]:-}" | tr "," " "); do deps+=("${d//-/_}"); done
  # softdep "pre: a b" names modules or aliases; only modules are taken.
  for d in $(modinfo -F softdep "$f" | sed -n 's/.*pre: *\([^:]*\).*/\1/p'); do
    [ -n "${file[${d//-/_}]:-}" ] && deps+=("${d//-/_}")
  done
  for d in "${deps[@]}"; do visit "$d"; done
  needs[$m]="${deps[*]}"
  unpack "$f" "$stage/modules/$m.ko"
  order+=("$m")
  state[$m]=done
}
for m in $WANTED; do visit "$m"; done
printf '%s\n' "${order[@]}" >"$stage/modules/order"
for m in "${order[@]}"; do echo "$m: ${needs[$m]}"; done >"$stage/modules/deps"
echo "$wanted_line" >"$stage/modules/wanted"
ko=${file[ublk_drv]:-}
[ -n "$ko" ] || { echo "vm-kernel: $pkg has no ublk_drv" >&2; exit 1; }
unpack "$ko" "$stage/ublk_drv.ko"
cp "$tmp"/x/boot/vmlinuz-* "$stage/vmlinuz"
extract_vmlinux "$stage/vmlinuz" "$stage/vmlinux" ||
  echo "vm-kernel: no uncompressed kernel in $pkg's vmlinuz; the lab boots vmlinuz" >&2
echo "$pkg" >"$stage/package"

# Into place: the modules last, as their order is what says it is done.
rm -rf "$dir/modules.old"
[ -d "$dir/modules" ] && mv "$dir/modules" "$dir/modules.old"
mv "$stage/ublk_drv.ko" "$dir/ublk_drv.ko"
mv "$stage/vmlinuz" "$dir/vmlinuz"
if [ -f "$stage/vmlinux" ]; then mv "$stage/vmlinux" "$dir/vmlinux"; else rm -f "$dir/vmlinux"; fi
mv "$stage/package" "$dir/package"
mv "$stage/modules" "$dir/modules"
rm -rf "$dir/modules.old"
echo "vm-kernel: $pkg, ${#order[@]} modules in $dir"
