#!/usr/bin/env bash
# Installs what skiff needs to build, test and demo on Debian 12 or Raspberry
# Pi OS (bookworm), and nothing that is already there. Safe to run again: with
# everything present it touches neither apt's lists nor the network.
#
# Java 17+ and Maven count as present when `java` and `mvn` are on PATH
# (however they got there); pytest and pytest-xdist when `python3` has them.
set -euo pipefail

PACKAGES=(
	# the build
	build-essential cmake pkg-config librdkafka-dev libcjson-dev libsqlite3-dev
	# the REST API, metrics and health (headers at build time; the library is
	# loaded at run time only when listeners= is set)
	libmicrohttpd-dev
	# https:// listeners: Connect's keystores, certificate reload and client
	# certificates (headers; libgnutls30 comes with libmicrohttpd12 and is
	# loaded at run time only when an https:// listener is set)
	libgnutls28-dev
	# compressed rotated logs: gzip (required), zstd and xz (used when present)
	zlib1g-dev libzstd-dev liblzma-dev
	# the journald source (optional at build time: SKIFF_JOURNALD)
	libsystemd-dev
	# the demo and the end-to-end tests
	sqlite3 kcat logrotate python3 python3-pytest
	# the end-to-end tests in three workers (scripts/test.sh)
	python3-pytest-xdist
	# short-lived client certificates for the TLS rotation tests (test_wire.py)
	python3-cryptography
	# /metrics parsed as Prometheus parses it (test_rest.py, test_backlog.py)
	python3-prometheus-client
	# journal files written and read by systemd's own code for the journald
	# tests (systemd-journal-remote, journalctl); systemd writes /etc/machine-id
	systemd-journal-remote systemd
	# the test broker (tests/kafka/kafka.sh); openssl makes the certificates
	# of its TLS listeners (--security, test_wire.py)
	openjdk-17-jre-headless maven openssl
	# the converters compared with Connect's in three time zones
	# (tests/convert/compare.sh)
	tzdata
	# a small ext4 on a loop device (mkfs.ext4: test_tail*.py) and tmpfs
	# mounts (mount, umount: test_fault_disk.py, test_blocked.py)
	e2fsprogs mount
	# fault, leak and sanitizer tests
	strace eatmydata fiu-utils valgrind clang libclang-rt-14-dev
	# scripts/check-format.sh (version 14, as .clang-format is written for)
	clang-format
	# the man pages rendered with every warning on (scripts/check-man.sh, CTest)
	groff-base
	# ps, kill, flock, setsid, setpriv (dropping capabilities for root), unshare
	procps util-linux
	# peak RSS of the benchmarks (tests/bench/benchlib.py: /usr/bin/time)
	time
	# the clean-room step of scripts/test.sh: a fresh Debian root
	# (scripts/cleanroom.sh), and the install roots of the board profile
	mmdebstrap
)

# One status line per installed architecture (a -dev package may be there
# for two); any one installed counts.
installed() { # package
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -qx "install ok installed"
}

java_ok() {
	local v
	command -v java >/dev/null || return 1
	# `java -version` prints e.g.: openjdk version "17.0.15" 2025-04-15
	v=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
	[ -n "$v" ] && [ "$v" -ge 17 ]
}

present() { # package
	case $1 in
	openjdk-17-jre-headless) java_ok && return 0 ;;
	maven) command -v mvn >/dev/null && return 0 ;;
	python3-pytest) python3 -m pytest --version >/dev/null 2>&1 && return 0 ;;
	python3-pytest-xdist) python3 -c 'import xdist' 2>/dev/null && return 0 ;;
	esac
	installed "$1"
}

main() {
	local sudo=() missing=() pkg log
	# --boards: also what board/test-boards.sh needs (cross compilers, qemu,
	# man; mmdebstrap, for the target sysroots and the install roots, is above).
	if [ "${1:-}" = --boards ]; then
		PACKAGES+=(crossbuild-essential-arm64 crossbuild-essential-armhf qemu-user
			qemu-user-static file
			# man on a foreign root's pages (firmware/debian/test-install.sh)
			man-db)
	fi
	for pkg in "${PACKAGES[@]}"; do
		present "$pkg" || missing+=("$pkg")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		# Root or sudo only when there is something to install: a user
		# without sudo on a machine that has everything runs the demo.
		if [ "$(id -u)" -ne 0 ]; then
			command -v sudo >/dev/null || {
				echo "install-deps: not root and no sudo; missing: ${missing[*]}" >&2
				exit 1
			}
			sudo=(sudo)
		fi
		log=$(mktemp "${TMPDIR:-/tmp}/install-deps.XXXXXX")
		# A list that fails to refresh (a mirror mid-sync, a foreign
		# architecture) need not stop the install: the old one may do.
		if ! "${sudo[@]}" apt-get update -q </dev/null >"$log" 2>&1; then
			echo "install-deps: warning: apt-get update failed, trying with the lists there are" >&2
			grep -E '^(E|W):' "$log" | head -n 5 >&2 || true
		fi
		if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends "${missing[@]}" </dev/null >>"$log" 2>&1; then
			tail -n 30 "$log" >&2
			echo "install-deps: apt-get install failed for: ${missing[*]} (log: $log)" >&2
			exit 1
		fi
		rm -f "$log"
		for pkg in "${missing[@]}"; do
			installed "$pkg" || {
				echo "install-deps: $pkg did not install" >&2
				exit 1
			}
			echo "install-deps: installed $pkg"
		done
	fi
	pip_fallback
	echo "install-deps: ok"
}

# A python3 that is not Debian's (pyenv, a venv) does not see apt's Python
# packages: give it the test modules it lacks from PyPI, for itself only.
pip_fallback() {
	local mod want=()
	for mod in pytest:pytest xdist:pytest-xdist cryptography:cryptography \
		prometheus_client:prometheus-client; do
		python3 -c "import ${mod%%:*}" 2>/dev/null || want+=("${mod#*:}")
	done
	[ ${#want[@]} -eq 0 ] && return 0
	if [ "$(python3 -c 'import sys; print(sys.prefix)')" = /usr ]; then
		echo "install-deps: Debian's python3 lacks ${want[*]}" >&2
		exit 1
	fi
	echo "install-deps: $(command -v python3) is not Debian's; pip install ${want[*]}"
	python3 -m pip install -q "${want[@]}" </dev/null
}

main "$@"
