/* txregex: a Java regex (java.util.regex) run as a POSIX extended regex,
 * matched against a whole string as Matcher.matches() does. Java's \\d \\w
 * \\s (and capitals) are written as the classes they stand for, in or out of
 * a [...] class; a [...] class is rebuilt as the set of ASCII characters it
 * names (its escapes read as Java reads them: [a\\]] holds a and ]), which is
 * all a Kafka topic name may hold. What POSIX lacks (lazy and possessive
 * quantifiers, (?...) groups, other escapes, nested classes and &&, non-ASCII
 * in a class) is refused when compiled, so a pattern means what it meant to
 * Connect, or is an error. POSIX picks the longest match where Java picks the first
 * alternative: a pattern whose groups could split a topic two ways may
 * capture differently. */
#ifndef SKIFF_TXREGEX_H
#define SKIFF_TXREGEX_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

/* The whole pattern is wrapped in one group: Java's group N is match N+1. */
#define TXREGEX_GROUP_SHIFT 1
/* Capturing groups a pattern may have (more is refused when compiled), and
 * the regmatch_t array that holds all of them. */
#define TXREGEX_MAX_GROUPS 32
#define TXREGEX_NMATCH (TXREGEX_MAX_GROUPS + 1 + TXREGEX_GROUP_SHIFT)

/* Compiles java into re (release with regfree). Returns 0, TX_ERR with
 * "'regex': why" in why, or TX_ERR_NOMEM. */
int txregex_compile(regex_t *re, const char *java, char *why, size_t len);

/* The number of Java capturing groups of re (Matcher.groupCount). */
size_t txregex_groups(const regex_t *re);

/* True when all of s matches; m[0..nm-1] get the groups (shifted). */
bool txregex_matches(const regex_t *re, const char *s, regmatch_t *m, size_t nm);

#endif
