/* txregex: Java's regular expressions (java.util.regex), as far as POSIX
 * extended regexes can run them (txregex.h). */
#include "transform/txregex.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transform/txops.h"
#include "util/buf.h"

/* Java's \d \w \s (and capitals), as the set of ASCII characters each
 * stands for; false when c is none of them. */
static bool class_of(char c, bool set[128])
{
	bool neg = c == 'D' || c == 'W' || c == 'S';

	if (strchr("dDwWsS", c) == NULL || c == '\0')
		return false;
	for (int ch = 1; ch < 128; ch++) {
		bool in = (c == 'd' || c == 'D')   ? (ch >= '0' && ch <= '9')
		          : (c == 'w' || c == 'W') ? (isalnum(ch) || ch == '_')
		                                   : strchr(" \t\n\v\f\r", ch) != NULL;

		if (in != neg)
			set[ch] = true;
	}
	return true;
}

/* Appends set (ASCII, at least one member) as a POSIX bracket expression,
 * written so that none of ] ^ - [ can mean anything but itself: ] first,
 * - last, ^ never first, [ never before . = or :. */
static void emit_set(const bool set[128], bool neg, struct buf *o)
{
	static const char special[] = "]^-[";
	bool dash = set['-'];
	size_t at;

	if (!neg && set['^']) {
		bool only = true;

		for (int ch = 1; ch < 128 && only; ch++)
			only = ch == '^' || !set[ch];
		if (only) {
			buf_addz(o, "\\^");
			return;
		}
	}
	buf_addz(o, neg ? "[^" : "[");
	at = o->len;
	if (set[']'])
		buf_addz(o, "]");
	for (int ch = 1; ch < 128; ch++) {
		int end = ch;

		if (!set[ch] || strchr(special, ch) != NULL)
			continue;
		while (end + 1 < 128 && set[end + 1] && strchr(special, end + 1) == NULL)
			end++;
		if (end - ch >= 2) {
			char r[3] = {(char)ch, '-', (char)end};

			buf_add(o, r, 3);
		} else {
			for (int k = ch; k <= end; k++)
				buf_add(o, &(char){(char)k}, 1);
		}
		ch = end;
	}
	if (set['[']) /* before ^, - or ]: never a [. [= [: */
		buf_addz(o, "[");
	if (set['^'] && o->len == at) {
		/* ^ first would negate: - goes first (itself there), or ^ is the
		 * only member of a negated set ("[^^]") */
		buf_addz(o, set['-'] ? "-^" : "^");
		dash = false;
	} else if (set['^']) {
		buf_addz(o, "^");
	}
	if (dash)
		buf_addz(o, "-");
	buf_addz(o, "]");
}

/* One member of a Java [...] class at *p: a character (plain or an escaped
 * punctuation mark), or a class escape added to set (returns 2). Returns 1
 * with *c set, 2, or 0 with *what saying why it is refused. */
static int class_atom(const char **p, char *c, bool set[128], const char **what)
{
	const char *s = *p;

	if ((unsigned char)*s >= 128)
		return *what = "a non-ASCII character in a [...] class", 0;
	if (*s == '[')
		return *what = "a [...] class inside a [...] class (union)", 0;
	if (s[0] == '&' && s[1] == '&')
		return *what = "&& (class intersection)", 0;
	if (*s != '\\') {
		*c = *s, *p = s + 1;
		return 1;
	}
	if (class_of(s[1], set)) {
		*p = s + 2;
		return 2;
	}
	if (s[1] == '\0' || (unsigned char)s[1] >= 128 || !ispunct((unsigned char)s[1]))
		return *what = "an escape other than \\d \\w \\s (and capitals) or \\ and a "
		               "punctuation mark",
		       0;
	*c = s[1], *p = s + 2;
	return 1;
}

/* Translates the Java class at *p ("[", up to its "]") into o; *p is left
 * after it. Returns 0, or -1 with *what. */
static int bracket(const char **p, struct buf *o, const char **what)
{
	bool set[128] = {false}, neg = false;
	const char *s = *p + 1;

	if (*s == '^')
		neg = true, s++;
	for (bool first = true; *s != ']' || first; first = false) {
		char lo, hi;
		int k;

		if (*s == '\0')
			return *what = "an unclosed [...] class", -1;
		if ((k = class_atom(&s, &lo, set, what)) == 0)
			return -1;
		if (k == 2)
			continue;
		hi = lo;
		if (s[0] == '-' && s[1] != ']' && s[1] != '\0') {
			s++;
			if ((k = class_atom(&s, &hi, set, what)) == 0)
				return -1;
			if (k == 2 || hi < lo)
				return *what = "an illegal character range", -1;
		}
		for (int ch = (unsigned char)lo; ch <= (unsigned char)hi; ch++)
			set[ch] = true;
	}
	*p = s + 1;
	emit_set(set, neg, o);
	return 0;
}

/* Java's regex as POSIX ERE, anchored at both ends and wrapped in one group
 * (so Java's group N is POSIX's N+1). Returns 0, or -1 with *bad at a
 * construct skiff cannot translate and *what saying which. */
static int posix_of(const char *java, struct buf *o, const char **bad, const char **what)
{
	buf_addz(o, "^(");
	for (const char *p = java; *p != '\0'; p++) {
		bool set[128] = {false};

		*bad = p;
		if ((*p == '?' || *p == '+') && p > java && strchr("*+?}", p[-1]) != NULL &&
		    !(p - java >= 2 && p[-2] == '\\'))
			return *what = "a lazy or possessive quantifier", -1;
		if (*p == '(' && p[1] == '?')
			return *what = "a (?...) group", -1;
		if (*p == '[') {
			if (bracket(&p, o, what) != 0)
				return -1;
			p--;
			continue;
		}
		if (*p != '\\') {
			buf_add(o, p, 1);
			continue;
		}
		if (class_of(p[1], set)) {
			emit_set(set, false, o);
		} else if (p[1] != '\0' && strchr(".[]{}()\\*+?^$|-/", p[1]) != NULL) {
			buf_add(o, p, 2);
		} else {
			return *what = "an escape other than \\d \\w \\s (and capitals) or \\ and "
			               "one of .[]{}()\\*+?^$|-/",
			       -1;
		}
		p++;
	}
	buf_addz(o, ")$");
	return 0;
}

int txregex_compile(regex_t *re, const char *java, char *why, size_t len)
{
	const char *bad = NULL, *what = NULL;
	char *posix = NULL;
	struct buf o;
	int rc;

	buf_init(&o, 4 * strlen(java) + 64);
	if (posix_of(java, &o, &bad, &what) != 0) {
		buf_free(&o);
		snprintf(why, len,
		         "'%s': skiff runs Java regexes as POSIX ones and cannot run %s (at index "
		         "%zu)",
		         java, what, (size_t)(bad - java));
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
