/* txregex: Java's regular expressions (java.util.regex), as far as POSIX
 * extended regexes can run them (txregex.h). */
#include "txregex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txops.h"
#include "util/buf.h"

/* Java's regex as POSIX ERE, anchored at both ends and wrapped in one group
 * (so Java's group N is POSIX's N+1). Returns 0, or -1 with *bad at a
 * construct skiff cannot translate. */
static int posix_of(const char *java, struct buf *o, const char **bad)
{
	static const struct {
		char c;
		const char *cls;
	} classes[] = {
	    {'d', "[0-9]"},         {'D', "[^0-9]"},        {'w', "[A-Za-z0-9_]"},
	    {'W', "[^A-Za-z0-9_]"}, {'s', "[ \t\n\v\f\r]"}, {'S', "[^ \t\n\v\f\r]"},
	};
	buf_addz(o, "^(");
	for (const char *p = java; *p != '\0'; p++) {
		bool done = false;

		if ((*p == '?' || *p == '+') && p > java && strchr("*+?}", p[-1]) != NULL &&
		    !(p - java >= 2 && p[-2] == '\\')) {
			*bad = p; /* lazy or possessive quantifier */
			return -1;
		}
		if (*p == '(' && p[1] == '?') {
			*bad = p;
			return -1;
		}
		if (*p != '\\') {
			buf_add(o, p, 1);
			continue;
		}
		if (p[1] == '\0') {
			*bad = p;
			return -1;
		}
		for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]) && !done; i++)
			if (p[1] == classes[i].c)
				buf_addz(o, classes[i].cls), done = true;
		if (!done && strchr(".[]{}()\\*+?^$|-/", p[1]) == NULL) {
			*bad = p;
			return -1;
		}
		if (!done)
			buf_add(o, p, 2);
		p++;
	}
	buf_addz(o, ")$");
	return 0;
}

int txregex_compile(regex_t *re, const char *java, char *why, size_t len)
{
	const char *bad = NULL;
	char *posix = NULL;
	struct buf o;
	int rc;

	buf_init(&o, 4 * strlen(java) + 64);
	if (posix_of(java, &o, &bad) != 0) {
		buf_free(&o);
		snprintf(why, len,
		         "'%s': skiff cannot run '%.2s' here (POSIX regex: no lazy or possessive "
		         "quantifiers, no (?...) groups, no other \\ escapes)",
		         java, bad);
		return TX_ERR;
	}
	if (buf_take(&o, &posix, NULL) != 0)
		return TX_ERR_NOMEM;
	rc = regcomp(re, posix, REG_EXTENDED);
	free(posix);
	if (rc != 0) {
		char e[256];

		regerror(rc, re, e, sizeof(e));
		snprintf(why, len, "'%s': %s", java, e);
		return TX_ERR;
	}
	if (txregex_groups(re) > TXREGEX_MAX_GROUPS) {
		regfree(re);
		snprintf(why, len, "'%s': more than %d groups", java, TXREGEX_MAX_GROUPS);
		return TX_ERR;
	}
	return 0;
}

size_t txregex_groups(const regex_t *re)
{
	return re->re_nsub - TXREGEX_GROUP_SHIFT;
}

bool txregex_matches(const regex_t *re, const char *s, regmatch_t *m, size_t nm)
{
	return regexec(re, s, nm, m, 0) == 0;
}
