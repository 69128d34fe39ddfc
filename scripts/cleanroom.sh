#!/usr/bin/env bash
# The clean-room step: proves that the README's commands need nothing but what
# the project's own scripts install, on a Debian 12 that has nothing else.
#
#   scripts/cleanroom.sh           in a fresh Debian 12 root: scripts/install-deps.sh,
#                                  the build, the unit tests (CTest), the format check,
#                                  the end-to-end tests' imports and their CI rules under
#                                  Debian's pytest, and scripts/demo.sh (2-3 minutes)
#   scripts/cleanroom.sh --e2e     also all the end-to-end tests in the root (12 minutes
#                                  more; scripts/test.sh --long)
#   scripts/cleanroom.sh --fresh   in a root made from nothing, not the kept one
#   scripts/cleanroom.sh --run CMD  install-deps and the build, then CMD (bash, in the
#                                  checkout's copy, its output shown): to reproduce a
#                                  failure, e.g. --run 'cd tests/e2e && python3 -m pytest
#                                  -x test_x.py' (SKIFF_BIN and SKIFF_TOOLS are set)
#
# scripts/test.sh runs it under CI=true (.ci/run), beside the end-to-end tests.
#
# The root is what `mmdebstrap --variant=minbase --include=ca-certificates,git
# bookworm` makes, plus the host's own CA certificates from
# /usr/local/share/ca-certificates (a proxy that re-signs TLS needs them, for
# apt, Maven and pip alike), and nothing else. scripts/install-deps.sh installs
# everything into it; the root as install-deps leaves it is kept in
# ${SKIFF_CACHE:-~/.cache/skiff}/cleanroom/KEY/, KEY a hash of install-deps.sh,
# of the CA certificates, of the recipe below and of the week: a package added
# to or taken from install-deps makes a new root from nothing, and so does a
# new week (Debian's updates). A kept root no run used for two days goes.
# Maven's and kafka.sh's caches are kept beside it, per KEY (a new root starts
# them empty: the first run fetches with Maven as a fresh machine does). Each
# run works in an overlay over the kept root, on the
# checkout's tracked files (uncommitted changes included, untracked files not:
# a file never added to git is missing here as it is in a fresh clone), so
# nothing a run writes outlives it.
#
# In the root, with CI=true: install-deps again (it finds everything; then
# once more as nobody, who has no sudo and needs none), cmake
# with SKIFF_REQUIRE_ALL (a missing optional library fails the build), the
# build (RelWithDebInfo in build/, as demo.sh builds it, which then finds it
# built; no sanitizers: this step is about what is installed, the host's ASan
# build tests the code), ctest (a test that would skip for a
# missing tool fails: tests/lib/missing.sh), scripts/check-format.sh, pytest's
# collection of tests/e2e (their imports) and tests/e2e/test_ci_skips.py (the
# host's python3 may not be Debian's: here the tests meet Debian's pytest),
# and scripts/demo.sh, which must show records and stop skiff with exit 0.
# Any step failing fails the whole, with the end of the step's log.
#
# Needs root (mmdebstrap, chroot, mounts in a private mount namespace: nothing
# stays mounted after it), mmdebstrap (install-deps installs it), overlayfs
# (else the root is copied: slower), and the network for a new root and the
# first Maven fetches. Environment: SKIFF_CACHE,
# SKIFF_DEBIAN_MIRROR (default http://deb.debian.org/debian), http_proxy,
# https_proxy, no_proxy (passed into the root).
set -euo pipefail
cd "$(dirname "$0")/.."

# What the root is made of; part of KEY.
SUITE=bookworm
MINBASE=(--variant=minbase --include=ca-certificates,git)

die() {
	echo "cleanroom: $*" >&2
	exit 1
}

# --- inside the root --------------------------------------------------------

# Runs in the chroot, from the checkout's copy at /skiff. Each step's output
# goes to /cleanroom-logs/STEP.log; the first that fails ends the run.
inside() { # [--e2e | --run CMD]
	cd /skiff
	# The end-to-end tests, when they run here, on this build (no sanitizers).
	export SKIFF_BIN=/skiff/build/skiff SKIFF_TOOLS=/skiff/build SKIFF_PLAIN_BIN=/skiff/build/skiff
	step install-deps scripts/install-deps.sh
	# A user without sudo (minbase has none) on a machine that has it all:
	# install-deps finds nothing to install and needs no root.
	step install-deps-user setpriv --reuid=65534 --regid=65534 --clear-groups \
		scripts/install-deps.sh
	step cmake cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSKIFF_REQUIRE_ALL=ON
	step build cmake --build build -j"$(nproc)"
	if [ "${1:-}" = --run ]; then
		bash -c "$2"
		return
	fi
	step ctest bash -c '. tests/lib/missing.sh && run_ctest build --output-on-failure -j"$(nproc)"'
	step check-format scripts/check-format.sh
	step e2e-imports sh -c 'cd tests/e2e && python3 -m pytest -q --collect-only &&
		python3 -m pytest -q test_ci_skips.py'
	step demo scripts/demo.sh # fails without records or without skiff's exit 0
	if [ "${1:-}" = --e2e ]; then
		step e2e sh -c 'tests/kafka/kafka.sh fetch && cd tests/e2e && python3 -m pytest -q -n 2'
	fi
	echo "cleanroom: ok: install-deps, build, unit tests, format, e2e imports, demo${1:+, e2e}"
}

step() { # name command...
	local name=$1 t0=$SECONDS log=/cleanroom-logs/$1.log said
	shift
	if ! "$@" </dev/null >"$log" 2>&1; then
		fail "$name" "$* failed"
	fi
	# The line that says what passed, when the step's tool prints one.
	said=$(grep -E "passed|skiff exited|install-deps: ok" "$log" | tail -n 1 | cut -c 1-100) || true
	echo "cleanroom: $name: ok ($((SECONDS - t0)) s)${said:+: $said}"
}

fail() { # name message
	echo "cleanroom: $1: $2; the end of its log:" >&2
	tail -n 60 "/cleanroom-logs/$1.log" >&2
	echo "cleanroom: the lines of that log that usually name the cause:" >&2
	grep -E "install-deps:|CMake Error|Could not find|not found|No package|CI=true|No module" \
		"/cleanroom-logs/$1.log" | head -n 20 | sed 's/^/cleanroom:   /' >&2 || true
	exit 1
}

if [ "${1:-}" = --inside ]; then
	shift
	inside "$@"
	exit
fi

# --- on the host ------------------------------------------------------------

fresh=0 mode=()
while [ $# -gt 0 ]; do
	case $1 in
	--fresh) fresh=1 ;;
	--e2e) mode=(--e2e) ;;
	--run) [ $# -ge 2 ] || die "--run needs a command"; mode=(--run "$2"); shift ;;
	*) die "unknown argument $1 (see the comment at the top)" ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, chroot and mounts)"
command -v mmdebstrap >/dev/null || die "mmdebstrap not found (scripts/install-deps.sh installs it)"

cache=${SKIFF_CACHE:-${HOME:-/root}/.cache/skiff}/cleanroom
mirror=${SKIFF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cas=(/usr/local/share/ca-certificates/*.crt)
[ -e "${cas[0]}" ] || cas=()
key=$( {
	echo "$SUITE ${MINBASE[*]} $mirror $(date +%G-W%V)"
	cat scripts/install-deps.sh
	[ ${#cas[@]} = 0 ] || cat "${cas[@]}"
} | sha256sum | cut -c 1-16)
kept=$cache/$key
mkdir -p "$cache"

# Runs COMMAND in ROOT as a fresh login would, in a private mount and PID
# namespace: /proc, /sys, /dev, a /tmp of its own, the host's resolv.conf and
# hosts (what an installed system has and minbase does not: without them
# "localhost" does not resolve); the mounts and every process left go with it
# (also when unshare is killed). Before the chroot, SETUP
# (a shell snippet, ROOT in $r) may mount more.
in_root() { # root setup command...
	local root=$1 setup=$2
	shift 2
	unshare --mount --pid --fork --kill-child --propagation private -- bash -c '
		set -euo pipefail
		r=$1 setup=$2
		shift 2
		eval "$setup"
		mount -t proc proc "$r/proc"
		mount --rbind /sys "$r/sys"
		mount --rbind /dev "$r/dev"
		mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
		cp /etc/resolv.conf /etc/hosts "$r/etc/"
		exec chroot "$r" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" CI=true \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			${http_proxy:+http_proxy=$http_proxy} ${https_proxy:+https_proxy=$https_proxy} \
			${no_proxy:+no_proxy=$no_proxy} "$@"' _ "$root" "$setup" "$@"
}

# Makes the kept root: minbase, the CA certificates, install-deps. Built
# aside and renamed into place, so that a run beside it never sees half a root.
make_root() {
	local tmp=$cache/$key.new.$$ t0=$SECONDS
	rm -rf "$tmp"
	mkdir -p "$tmp"
	echo "cleanroom: a new root ($SUITE minbase, key $key): mmdebstrap, then scripts/install-deps.sh"
	if ! mmdebstrap "${MINBASE[@]}" "$SUITE" "$tmp/root" "deb $mirror $SUITE main" \
		"deb $mirror $SUITE-updates main" \
		"deb ${SKIFF_DEBIAN_SECURITY:-http://deb.debian.org/debian-security} $SUITE-security main" \
		>"$tmp/mmdebstrap.log" 2>&1; then
		tail -n 20 "$tmp/mmdebstrap.log" >&2
		rm -rf "$tmp"
		die "mmdebstrap failed"
	fi
	if [ ${#cas[@]} -gt 0 ]; then
		cp "${cas[@]}" "$tmp/root/usr/local/share/ca-certificates/"
		chroot "$tmp/root" update-ca-certificates >"$tmp/ca.log" 2>&1 ||
			{ cat "$tmp/ca.log" >&2; die "update-ca-certificates failed in the root"; }
	fi
	install -m 0755 scripts/install-deps.sh "$tmp/root/install-deps.sh"
	if ! in_root "$tmp/root" : /install-deps.sh >"$tmp/install-deps.log" 2>&1; then
		tail -n 40 "$tmp/install-deps.log" >&2
		rm -rf "$tmp"
		die "scripts/install-deps.sh failed in a fresh $SUITE root (above: the end of its log)"
	fi
	rm -f "$tmp/root/install-deps.sh"
	mkdir -p "$tmp/m2" "$tmp/skiff-cache"
	touch "$tmp/made"
	if ! mv -T "$tmp" "$kept" 2>/dev/null; then
		rm -rf "$tmp" # another run made it meanwhile
	fi
	echo "cleanroom: root made in $((SECONDS - t0)) s ($(du -sh "$kept/root" | cut -f1))"
}

# Kept roots of other keys that no run has used for two days go, and what
# a run that was killed left (a root half made, a --fresh one).
prune() {
	local d
	for d in "$cache"/*/; do
		d=${d%/}
		[ "$d" != "$kept" ] || continue
		case ${d##*/} in
		*.new.* | fresh-*) [ -z "$(find "$d" -maxdepth 0 -mmin +2880)" ] || rm -rf "$d" ;;
		*) [ -n "$(find "$d" -maxdepth 1 \( -name used -o -name made \) -mmin -2880)" ] ||
			rm -rf "$d" ;;
		esac
	done
}

t0=$SECONDS
run=$(mktemp -d "${TMPDIR:-/tmp}/skiff-cleanroom.XXXXXX")
trap 'rm -rf "$run"' EXIT
if [ $fresh = 1 ]; then
	# A root of this run's own, never kept (a kept one may be another run's).
	key=fresh-$$ kept=$cache/fresh-$$
	trap 'rm -rf "$run" "$kept"' EXIT
	make_root
elif [ ! -e "$kept/made" ]; then
	make_root
else
	echo "cleanroom: the kept root $kept (made $(date -r "$kept/made" '+%F %R'))"
fi
touch "$kept/used"
prune

mkdir -p "$run/upper" "$run/work" "$run/merged" "$run/logs"
# The checkout's tracked files as they are now (git stash create: HEAD plus
# uncommitted changes, without touching the work tree).
commit=$(git -c user.name=cleanroom -c user.email=cleanroom@localhost stash create)
commit=${commit:-HEAD}
git archive --format=tar "$commit" >"$run/src.tar"

# The kept root read-only under a private upper layer (or a copy of it), the
# checkout, the logs and the caches: mounted by in_root's setup, in its
# namespace.
export CR_KEPT=$kept CR_RUN=$run
if grep -qw overlay /proc/filesystems; then
	setup='mount -t overlay overlay \
		-o "lowerdir=$CR_KEPT/root,upperdir=$CR_RUN/upper,workdir=$CR_RUN/work" "$r"'
else
	cp -a "$kept/root/." "$run/merged/"
	setup=:
fi
setup="$setup"'
	mkdir -p "$r/skiff" "$r/cleanroom-logs" "$r/root/.m2" "$r/root/.cache/skiff"
	tar -xf "$CR_RUN/src.tar" -C "$r/skiff"
	mount --bind "$CR_RUN/logs" "$r/cleanroom-logs"
	mount --bind "$CR_KEPT/m2" "$r/root/.m2"
	mount --bind "$CR_KEPT/skiff-cache" "$r/root/.cache/skiff"'
status=0
in_root "$run/merged" "$setup" /skiff/scripts/cleanroom.sh --inside "${mode[@]}" || status=$?
echo "cleanroom: $((SECONDS - t0)) s in all"
if [ $status != 0 ]; then
	logs=$(mktemp -d "${TMPDIR:-/tmp}/skiff-cleanroom-logs.XXXXXX")
	cp -a "$run/logs/." "$logs/"
	die "FAILED in a fresh $SUITE root (the step and the end of its log above; all logs: $logs)"
fi
