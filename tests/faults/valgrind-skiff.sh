#!/usr/bin/env bash
# skiff under valgrind memcheck, as SKIFF_BIN for an end-to-end run (long
# profile, tests/faults/long.sh). Runs build-plain/skiff (valgrind and ASan do
# not mix); one log per process in SKIFF_VALGRIND_LOGS. Definite leaks and
# memory errors count; librdkafka's and glibc's still-reachable blocks do not.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
logs=${SKIFF_VALGRIND_LOGS:?set SKIFF_VALGRIND_LOGS to a directory for the logs}
exec valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --track-origins=yes --error-exitcode=99 \
	--log-file="$logs/valgrind.%p.log" "$here/build-plain/skiff" "$@"
