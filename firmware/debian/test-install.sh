#!/usr/bin/env bash
# test-install.sh DEB: installs skiff's .deb into a fresh Debian 12 root of
# the package's architecture (mmdebstrap) and checks what a device gets:
#   - Depends suffices: apt resolves the root from the .deb's Depends alone,
#     and the binary then loads (skiff --check runs);
#   - /etc/skiff/skiff.properties is a conffile, root:skiff 0640;
#   - the skiff user exists; /var/lib/skiff is skiff's, 0700;
#   - skiff --check /etc/skiff/skiff.properties passes as the skiff user;
#   - systemd-analyze verify accepts the unit;
#   - `man skiff` and `man 5 skiff.properties` show the package's pages (man-db
#     in the root, or the host's man on the root's pages for a foreign root).
# Native architecture, or a foreign one that binfmt_misc runs through
# qemu-user-static: minbase + systemd, the .deb installed by dpkg inside the
# root (its postinst runs there), then removed and purged (prerm and postrm
# run there). binfmt_misc is mounted and qemu's handler registered (with F,
# so it works inside the chroot) from /usr/lib/binfmt.d when missing: a
# container started as root may do so. Otherwise (SKIFF_NO_BINFMT=1, or no
# right to register): the root is unpacked only (--variant=extract, no
# maintainer script can run: their children would be foreign binaries), the
# user is made from the package's sysusers.d file (what postinst runs), and
# skiff runs as qemu-ARCH-static inside the chroot.
# Needs root, mmdebstrap, qemu-user-static for foreign .debs. Prints one line
# per check; exit 0 when all pass.
set -euo pipefail

die() {
	echo "test-install: $*" >&2
	exit 1
}
[ $# -eq 1 ] && [ -f "$1" ] || die "usage: $0 DEB"
deb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
arch=$(dpkg-deb -f "$deb" Architecture)
host=$(dpkg --print-architecture)
mirror=${SKIFF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d "${TMPDIR:-/tmp}/skiff-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
ok() { echo "test-install[$arch]: ok: $*"; }

# Whether the kernel runs $arch binaries through qemu-user-static (binfmt_misc
# with the F flag: the interpreter is opened once, so it need not exist in
# the chroot); registers Debian's handler when it can.
binfmt_ready() {
	local name conf fs=/proc/sys/fs/binfmt_misc
	case $arch in
	arm64) name=qemu-aarch64 ;;
	armhf) name=qemu-arm ;;
	*) return 1 ;;
	esac
	[ "${SKIFF_NO_BINFMT:-0}" = 0 ] || return 1
	conf=/usr/lib/binfmt.d/$name.conf
	[ -f "$fs/status" ] || mount -t binfmt_misc binfmt_misc "$fs" 2>/dev/null || return 1
	[ -f "$fs/$name" ] || { [ -f "$conf" ] && cat "$conf" >"$fs/register"; } 2>/dev/null ||
		return 1
	grep -qx enabled "$fs/$name" && grep -q '^flags:.*F' "$fs/$name"
}

dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -qx /etc/skiff/skiff.properties ||
	die "/etc/skiff/skiff.properties is not a conffile"
ok "conffile /etc/skiff/skiff.properties"

mm=(mmdebstrap --architectures="$arch" bookworm "$root"
	"deb $mirror bookworm main" "deb $mirror bookworm-updates main")
full=0
if [ "$arch" = "$host" ] || binfmt_ready; then
	full=1
	[ "$arch" = "$host" ] || ok "binfmt_misc runs $arch binaries: maintainer scripts run in the root"
	"${mm[@]}" --variant=minbase --include="systemd,man-db,$deb" \
		--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount >"$work/mm.log" 2>&1 ||
		{ tail -n 20 "$work/mm.log" >&2; die "mmdebstrap failed"; }
	run() { chroot "$root" "$@"; }
	run_as_skiff() { chroot --userspec=skiff:skiff "$root" "$@"; }
	grep -A1 '^Package: skiff$' "$root/var/lib/dpkg/status" | grep -q 'install ok installed' ||
		die "skiff not installed"
	ok "installed by dpkg in the root, Depends resolved by apt"
else
	case $arch in
	arm64) qemu=qemu-aarch64-static ;;
	armhf) qemu=qemu-arm-static ;;
	*) die "no qemu known for $arch" ;;
	esac
	command -v "$qemu" >/dev/null || die "$qemu not found (apt-get install qemu-user-static)"
	# Only what Depends names (and what that pulls): a library missing from
	# Depends makes skiff fail to load below.
	deps=$(dpkg-deb -f "$deb" Depends | sed 's/([^)]*)//g; s/[[:space:]]//g')
	"${mm[@]}" --variant=extract --include="$deps" >"$work/mm.log" 2>&1 ||
		{ tail -n 20 "$work/mm.log" >&2; die "mmdebstrap failed"; }
	dpkg-deb -x "$deb" "$root"
	ok "unpacked with only its Depends ($deps) and what they pull, for $arch"
	systemd-sysusers --root="$root" "$root/usr/lib/sysusers.d/skiff.conf"
	gid=$(sed -n 's/^skiff:[^:]*:\([0-9]*\):.*/\1/p' "$root/etc/group")
	uid=$(sed -n 's/^skiff:[^:]*:\([0-9]*\):.*/\1/p' "$root/etc/passwd")
	chown "0:$gid" "$root/etc/skiff/skiff.properties"
	chmod 0640 "$root/etc/skiff/skiff.properties"
	install -d -o "$uid" -g "$gid" -m 0700 "$root/var/lib/skiff"
	install -m 0755 "$(command -v "$qemu")" "$root/usr/bin/$qemu"
	run() { chroot "$root" "/usr/bin/$qemu" "$@"; }
	run_as_skiff() { chroot --userspec="$uid:$gid" "$root" "/usr/bin/$qemu" "$@"; }
fi

grep -q '^skiff:' "$root/etc/passwd" || die "no skiff user"
ok "user $(grep '^skiff:' "$root/etc/passwd")"
mode=$(stat -c '%u:%g %a' "$root/etc/skiff/skiff.properties")
want="0:$(sed -n 's/^skiff:[^:]*:\([0-9]*\):.*/\1/p' "$root/etc/group") 640"
[ "$mode" = "$want" ] || die "config is $mode, want $want (root:skiff 0640)"
ok "config root:skiff 0640"
[ "$(stat -c %a "$root/var/lib/skiff")" = 700 ] || die "/var/lib/skiff is not 0700"
ok "/var/lib/skiff 0700"

run_as_skiff /usr/bin/skiff --check /etc/skiff/skiff.properties >"$work/check.out" 2>&1 ||
	{ cat "$work/check.out" >&2; die "skiff --check failed in the root"; }
ok "skiff --check /etc/skiff/skiff.properties as skiff ($(run /usr/bin/skiff --version 2>&1))"

if [ "$full" = 1 ]; then
	run systemd-analyze verify /lib/systemd/system/skiff.service >"$work/verify.out" 2>&1 ||
		{ cat "$work/verify.out" >&2; die "systemd-analyze verify failed"; }
	[ ! -s "$work/verify.out" ] || { cat "$work/verify.out" >&2; die "systemd-analyze verify warned"; }
	ok "systemd-analyze verify (the root's systemd)"
else
	# The root's systemd-analyze is foreign; the host's judges the same text
	# (ExecStart= only has to be an executable file) in a second root that
	# also has systemd's units and /bin/sh (the first one had only Depends).
	units=$work/units
	mmdebstrap --architectures="$arch" --variant=extract --include=systemd,dash \
		bookworm "$units" "deb $mirror bookworm main" >"$work/mm2.log" 2>&1 ||
		{ tail -n 20 "$work/mm2.log" >&2; die "mmdebstrap (units) failed"; }
	dpkg-deb -x "$deb" "$units"
	systemd-analyze verify --root="$units" /lib/systemd/system/skiff.service >"$work/verify.out" 2>&1 ||
		{ cat "$work/verify.out" >&2; die "systemd-analyze verify failed"; }
	ok "systemd-analyze verify --root (the host's systemd)"
fi
# The man pages: where man looks for them, readable, about skiff.
for page in man1/skiff.1.gz man5/skiff.properties.5.gz; do
	[ -f "$root/usr/share/man/$page" ] || die "/usr/share/man/$page missing"
done
if [ "$full" = 1 ]; then
	man_in_root() { run env MANPAGER=cat MANWIDTH=80 LC_ALL=C.UTF-8 man "$@"; }
else
	# The root's man is foreign: the host's reads the root's pages.
	command -v man >/dev/null || die "man not found on the host (apt-get install man-db)"
	man_in_root() { MANPAGER=cat MANWIDTH=80 LC_ALL=C.UTF-8 man -M "$root/usr/share/man" "$@"; }
fi
man_in_root skiff >"$work/man1.out" 2>"$work/man1.err" || { cat "$work/man1.err" >&2; die "man skiff failed"; }
grep -q 'skiff offsets import' "$work/man1.out" && grep -q 'EXIT STATUS' "$work/man1.out" ||
	{ head -n 20 "$work/man1.out" >&2; die "man skiff does not show skiff(1)"; }
man_in_root 5 skiff.properties >"$work/man5.out" 2>"$work/man5.err" ||
	{ cat "$work/man5.err" >&2; die "man 5 skiff.properties failed"; }
grep -q 'offset.flush.interval.ms' "$work/man5.out" ||
	{ head -n 20 "$work/man5.out" >&2; die "man 5 skiff.properties does not show the properties"; }
ok "man skiff, man 5 skiff.properties ($(wc -l <"$work/man1.out") and $(wc -l <"$work/man5.out") lines)"

if [ "$full" = 1 ]; then
	# prerm and postrm: a removal keeps the config and the state, a purge
	# takes the state away and leaves the user (Debian keeps system users).
	run dpkg --remove skiff >"$work/remove.out" 2>&1 ||
		{ cat "$work/remove.out" >&2; die "dpkg --remove failed"; }
	[ -f "$root/etc/skiff/skiff.properties" ] && [ -d "$root/var/lib/skiff" ] ||
		die "dpkg --remove took the config or the state"
	run dpkg --purge skiff >"$work/purge.out" 2>&1 ||
		{ cat "$work/purge.out" >&2; die "dpkg --purge failed"; }
	[ ! -e "$root/var/lib/skiff" ] && [ ! -e "$root/etc/skiff/skiff.properties" ] ||
		die "dpkg --purge left /var/lib/skiff or the config"
	grep -q '^skiff:' "$root/etc/passwd" || die "the purge removed the skiff user"
	ok "removed (config and state kept), purged (state gone, user kept): prerm and postrm ran"
fi
echo "test-install[$arch]: all checks passed"
