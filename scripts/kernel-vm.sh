#!/usr/bin/env bash
# Runs build/isoprof on another kernel: a Debian kernel package booted in
# QEMU with a small initramfs (busybox, isoprof and its libraries, the
# ground_truth fixture), which prints `isoprof check`, then records the
# fixture for a second as root, and powers off.  For what this host's
# kernel cannot show: Debian 12's 6.1 (no uprobe_multi, CAP_BPF kept after
# attach, perf_event_paranoid 3), lockdown=confidentiality.
#
#   scripts/kernel-vm.sh [PACKAGE] [-- KERNEL ARGS...]
#     PACKAGE  a Debian kernel image package (default: the newest
#              linux-image-6.1.0-*-amd64 apt knows)
#     ISOPROF_VM_PARANOID=N  set kernel.perf_event_paranoid to N before
#              recording (Debian's default 3 admits only CAP_SYS_ADMIN)
#     ISOPROF_VM_ACCEL  QEMU accelerator (default tcg: nested KVM may hang)
#
# Needs qemu-system-x86 and busybox-static (Debian packages), and `make`
# run first.  Prints the guest's console from its first line of output.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
PKG=
if [ $# -gt 0 ] && [ "$1" != -- ]; then
	PKG=$1
	shift
fi
[ "${1:-}" = -- ] && shift
EXTRA=$*

for c in qemu-system-x86_64 busybox setpriv; do
	command -v $c >/dev/null ||
		{ echo "kernel-vm: $c not found (apt-get install qemu-system-x86 busybox-static)" >&2; exit 1; }
done
[ -x "$TOP/build/isoprof" ] && [ -x "$TOP/build/fixtures/ground_truth" ] ||
	{ echo "kernel-vm: run make all fixtures first" >&2; exit 1; }
if [ -z "$PKG" ]; then
	PKG=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | awk '{ print $1 }' |
		sort -V | tail -1)
	[ -n "$PKG" ] || { echo "kernel-vm: no linux-image-6.1.0-*-amd64 known (apt-get update?)" >&2; exit 1; }
fi

W=$(mktemp -d /tmp/isoprof-vm.XXXXXX)
trap 'rm -rf "$W"' EXIT
(cd "$W" && apt-get download "$PKG" >/dev/null)
dpkg-deb -x "$W"/*.deb "$W/k"
KERNEL=$(ls "$W"/k/boot/vmlinuz-* | head -1)

R=$W/root
mkdir -p "$R/bin" "$R/proc" "$R/sys" "$R/dev" "$R/out"
cp "$(command -v busybox)" "$R/bin/busybox"
cp "$TOP/build/isoprof" "$TOP/build/fixtures/ground_truth" "$R/"
cp "$(command -v setpriv)" "$R/setpriv"
for b in "$R/isoprof" "$R/ground_truth" "$R/setpriv"; do
	ldd "$b" | awk '/=>/ { print $3 } /^\t\// { print $1 }'
done | sort -u | while read -r lib; do
	[ -f "$lib" ] || continue
	mkdir -p "$R$(dirname "$lib")"
	cp -L "$lib" "$R$lib"
done
cat >"$R/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
mount -t tmpfs out /out
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
echo "=== kernel-vm: Linux \$(uname -r), \$(cat /proc/cmdline)"
echo "=== isoprof check"
/isoprof check
echo "=== exit \$?"
echo "=== isoprof check as nobody"
/setpriv --reuid=65534 --regid=65534 --clear-groups /isoprof check >/out/nobody
echo "=== exit \$? (\$(grep -c ' no ' /out/nobody) features missing)"
[ -n "${ISOPROF_VM_PARANOID:-}" ] && echo ${ISOPROF_VM_PARANOID:-} >/proc/sys/kernel/perf_event_paranoid &&
	echo "=== kernel.perf_event_paranoid=\$(cat /proc/sys/kernel/perf_event_paranoid)"
echo "=== isoprof record of ground_truth, 1 s"
/ground_truth 8 /dev/null &
sleep 0.3
/isoprof record -q --pid \$! --duration-ms 1000 -o /out/gt.pb.gz
echo "=== exit \$?"
[ -s /out/gt.pb.gz ] && /isoprof top --nodecount 5 /out/gt.pb.gz
poweroff -f
EOF
chmod 755 "$R/init"
(cd "$R" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 >"$W/initrd.gz")

timeout 600 qemu-system-x86_64 -accel "${ISOPROF_VM_ACCEL:-tcg}" -cpu max -m 2048 -smp 2 \
	-nographic -no-reboot -kernel "$KERNEL" -initrd "$W/initrd.gz" \
	-append "console=ttyS0 quiet panic=-1 rdinit=/init $EXTRA" </dev/null >"$W/console" 2>&1 || true
sed -n '/=== kernel-vm/,$p' "$W/console" | tr -d '\r' | grep -v 'reboot: Power down'
