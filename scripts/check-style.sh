#!/usr/bin/env bash
# Fails when src/ breaks a rule of STYLE.md that a grep can see (curl's
# checksrc idea):
#   banned      a function STYLE.md bans (atoi, strcpy, sprintf, ...)
#   bare-code   `return -N` (N >= 2) or `? x : -N;`: an error code without a
#               name (util/err.h: named codes and a *_strerror)
#   errno       a `-errno` returned or stored as an error code, or an errno
#               constant of our choosing returned (`return -ENOMEM;`,
#               `? 0 : -EBADMSG;`): keep errno in a variable and return a
#               named code with strerror() in errbuf
#   folder      a project include without its folder ("buf.h", not
#               "util/buf.h"): one include root, src/
#   private     a *_private.h included by another file of src/ than its
#               module's .c (x_private.h: x.c only; the unit tests may)
#   config-name config_str(s, "key") and the like outside config.c: settings
#               are bound to a module's struct once at load (issue 27)
# scripts/check-style.allow lists the files a check lets pass for now.
set -euo pipefail
shopt -s lastpipe # report, at a pipeline's end, runs in this shell: it sets failed
cd "$(dirname "$0")/.."
allow=scripts/check-style.allow
failed=0

# Prints the grep hits (file:line:text) on stdin that no allow line of
# check $1 covers.
unallowed() {
	local check=$1 line file glob
	local -a globs=()

	while read -r c g _; do
		[[ -z $c || $c == \#* ]] && continue
		[[ $c == "$check" ]] && globs+=("$g")
	done <"$allow"
	while IFS= read -r line; do
		file=${line%%:*}
		for glob in "${globs[@]}"; do
			# shellcheck disable=SC2053 # a glob on purpose
			[[ $file == $glob ]] && continue 2
		done
		printf '%s\n' "$line"
	done
}

# Drops hits inside comments (a line that starts with /* or *).
code_only() {
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*)' || true
}

report() {
	local check=$1 why=$2 hits

	hits=$(unallowed "$check")
	if [[ -n $hits ]]; then
		printf '%s\n' "$hits"
		echo "check-style: $check: $why" >&2
		failed=1
	fi
}

{ grep -rnE '\b(atoi|atol|atoll|strtok|strcpy|strcat|sprintf|vsprintf|gets)\s*\(' src || true; } |
	report banned "banned function used (see above); use the checked helpers in src/util"

{ grep -rnE 'return[[:space:]]+-[2-9]\b|[?:][[:space:]]*-[2-9][[:space:]]*;' src || true; } | code_only |
	report bare-code "a bare error code (see above); name it in the module's enum (util/err.h)"

{ grep -rnE '(^|[^A-Za-z_])-errno\b|return[[:space:]]+-E[A-Z0-9]+\b|[?:][[:space:]]*-E[A-Z0-9]+[[:space:]]*;' src || true; } | code_only |
	report errno "-errno as an error code (see above); a named code, strerror(errno) in errbuf"

{ grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^/"]+"' src || true; } |
	report folder "a project include without its folder (see above); write \"util/buf.h\""

{ grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]*_private\.h"' src || true; } |
	while IFS= read -r line; do
		file=${line%%:*}
		inc=$(sed -E 's/.*#[[:space:]]*include[[:space:]]+"([^"]*)".*/\1/' <<<"${line#*:*:}")
		[[ src/${inc%_private.h}.c == "$file" ]] || printf '%s\n' "$line"
	done | report private "another module's private header (see above); use its public one"

# config_str(s, "key") and the like, the call possibly over two lines: a
# setting looked up by name at run time instead of bound once at load.
{ find src -name '*.c' | sort | grep -vx src/config/config.c | xargs perl -0ne '
	while (/\bconfig_(str|int|bool|list_len|list_item|is_set)\(\s*[^,()]*(?:\([^()]*\))?[^,()]*,\s*"([^"]*)"/g) {
		my $l = 1 + (substr($_, 0, $-[0]) =~ tr/\n//); print "$ARGV:$l: config_$1(\"$2\")\n" }' || true; } |
	report config-name "a setting read by name at run time (see above); bind it to a member of the module's settings struct (CFG_FIELD, config_section_bind)"

if [[ $failed -ne 0 ]]; then
	exit 1
fi
echo "check-style: ok"
