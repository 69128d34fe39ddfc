# missing.sh: how a test script reacts to a tool it needs that is not there
# (sourced, bash). The shell side of tests/e2e/harness.py's missing().
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
