# missing.sh: how a test script reacts to a tool it needs that is not there,
# and how CTest's skips count (sourced, bash). The shell side of
# tests/e2e/harness.py's missing().
#
# What scripts/install-deps.sh installs is the project's to provide: on a
# developer's machine without it a test is skipped (exit 77, CTest's
# SKIP_RETURN_CODE here), naming the package; under CI=true (.ci/run) it
# fails (exit 1), since there its absence is the project's fault.

# Whether this is a CI run: CI set, and not to 0/false/no.
in_ci() {
	case $(printf '%s' "${CI:-}" | tr '[:upper:]' '[:lower:]') in
	"" | 0 | false | no) return 1 ;;
	esac
}

# Exits 77, or 1 under CI=true, saying that WHAT is missing and which package
# of scripts/install-deps.sh brings it.
missing() { # what package
	if in_ci; then
		echo "$(basename "$0"): $1: scripts/install-deps.sh installs $2 (CI=true: a CI run does not skip for it)" >&2
		exit 1
	fi
	echo "$(basename "$0"): $1, skipping (scripts/install-deps.sh installs $2)" >&2
	exit 77
}

# Runs ctest in DIR with ARGS. Under CI=true a test that CTest reports as
# skipped fails the run: each SKIP_RETURN_CODE of CMakeLists.txt is for
# something the project installs or builds (java, mvn, groff, the journald
# source), which a CI run must have.
run_ctest() { # dir args...
	local - dir=$1 out rc=0
	set -o pipefail # ctest's status through tee, whatever the caller's options
	shift
	out=$(mktemp "${TMPDIR:-/tmp}/ctest.XXXXXX")
	(cd "$dir" && ctest "$@") 2>&1 | tee "$out" || rc=$?
	if [ $rc = 0 ] && in_ci && grep -q '(Skipped)$' "$out"; then
		echo "$(basename "$0"): CI=true: CTest skipped $(grep -c '(Skipped)$' "$out") test(s) (above); a CI run does not skip" >&2
		rc=1
	fi
	rm -f "$out"
	return $rc
}
