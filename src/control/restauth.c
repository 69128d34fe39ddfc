/* restauth: HTTP Basic authentication of the REST API (restauth.h). */
#include "control/restauth.h"

#include "config/props.h"
#include "util/text.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_JAAS_BYTES (64 * 1024)
#define MODULE "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
/* The longest Authorization value looked at: user:password in base64. */
#define MAX_CREDENTIALS 1024

const char restauth_refusal[] = "User cannot access the resource.";

struct restauth {
	char *jaas, *where;
	char *file;          /* the credentials file the JAAS entry names */
	struct props *users; /* its user: password lines */
};

/* ---- the JAAS file ------------------------------------------------------------ */

struct lexer {
	const char *text, *p, *end;
	const char *at; /* where tok starts in text */
	char tok[1024];
	bool quoted;
	bool unclosed; /* a quoted string ran to the end of the text */
};

/* The line (from 1) of text that at is on, for messages. */
static int line_of(const struct lexer *lx, const char *at)
{
	int line = 1;

	for (const char *c = lx->text; c < at && c < lx->end; c++)
		line += *c == '\n';
	return line;
}

/* The next token into lx->tok: a word, a "quoted string" (Java's escapes
 * \" and \\ kept simple), or one of { } ; =. Comments are // and slash-star
 * as Java's ConfigFile reads them. Returns false at the end, on a token
 * too long, or on a quoted string that never ends (lx->unclosed). */
static bool next(struct lexer *lx)
{
	size_t n = 0;

	for (;;) {
		while (lx->p < lx->end && isspace((unsigned char)*lx->p))
			lx->p++;
		if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '/') {
			while (lx->p < lx->end && *lx->p != '\n')
				lx->p++;
		} else if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '*') {
			const char *close = lx->p + 2;

			while (close + 1 < lx->end && !(close[0] == '*' && close[1] == '/'))
				close++;
			lx->p = close + 1 < lx->end ? close + 2 : lx->end;
		} else {
			break;
		}
	}
	lx->quoted = false;
	lx->at = lx->p;
	lx->tok[0] = '\0';
	if (lx->p >= lx->end)
		return false;
	if (strchr("{};=", *lx->p) != NULL) {
		lx->tok[0] = *lx->p++;
		lx->tok[1] = '\0';
		return true;
	}
	if (*lx->p == '"') {
		lx->quoted = true;
		for (lx->p++; lx->p < lx->end && *lx->p != '"'; lx->p++) {
			if (*lx->p == '\\' && lx->p + 1 < lx->end)
				lx->p++;
			if (n + 1 >= sizeof(lx->tok))
				return false;
			lx->tok[n++] = *lx->p;
		}
		if (lx->p >= lx->end) {
			lx->unclosed = true;
			lx->tok[0] = '\0';
			return false;
		}
		lx->p++;
		lx->tok[n] = '\0';
		return true;
	}
	while (lx->p < lx->end && !isspace((unsigned char)*lx->p) &&
	       strchr("{};=\"", *lx->p) == NULL) {
		if (n + 1 >= sizeof(lx->tok))
			return false;
		lx->tok[n++] = *lx->p++;
	}
	lx->tok[n] = '\0';
	return true;
}

static bool is(const struct lexer *lx, const char *s)
{
	return !lx->quoted && strcmp(lx->tok, s) == 0;
}

/* A login module's control flag: Java compares them ignoring case. */
static bool is_flag(const struct lexer *lx)
{
	static const char *const flags[] = {"required", "requisite", "sufficient", "optional"};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!lx->quoted && strcasecmp(lx->tok, flags[i]) == 0)
			return true;
	return false;
}

/* errbuf := "WHAT:LINE: why", the line the lexer stopped on; a quoted
 * string that never ends is named by the line it opens on. */
static int refuse(const struct lexer *lx, const char *what, const char *why, char *errbuf,
                  size_t errlen)
{
	if (lx->unclosed)
		snprintf(errbuf, errlen, "%s:%d: a quoted string that never ends (a \" missing)",
		         what, line_of(lx, lx->at));
	else if (lx->tok[0] == '\0' && lx->at >= lx->end)
		snprintf(errbuf, errlen, "%s:%d: %s (the file ends there)", what,
		         line_of(lx, lx->at), why);
	else {
		char near[101];
		size_t n = 0;

		/* a binary file's bytes are not printed as they are */
		for (const char *c = lx->at; c < lx->end && c < lx->p && n + 1 < sizeof(near); c++)
			near[n++] = isprint((unsigned char)*c) ? *c : '?';
		near[n] = '\0';
		snprintf(errbuf, errlen, "%s:%d: %s (near '%s')", what, line_of(lx, lx->at), why,
		         near);
	}
	return RESTAUTH_ERR_CONFIG;
}

/* One login module of the entry: MODULE FLAG (key=value)* ; . Sets *file
 * (malloc'd) from its file option. */
static int module(struct lexer *lx, char **file, const char *what, char *errbuf, size_t errlen)
{
	if (strcmp(lx->tok, MODULE) != 0) {
		snprintf(errbuf, errlen,
		         "%s:%d: the KafkaConnect entry names the login module %.200s: skiff has "
		         "%s only",
		         what, line_of(lx, lx->at), lx->tok, MODULE);
		return RESTAUTH_ERR_CONFIG;
	}
	if (!next(lx) || !is_flag(lx))
		goto bad;
	while (next(lx) && !is(lx, ";")) {
		char key[64];
		size_t klen = strlen(lx->tok);

		if (lx->quoted || klen >= sizeof(key))
			goto bad;
		memcpy(key, lx->tok, klen + 1);
		if (!next(lx) || !is(lx, "=") || !next(lx))
			goto bad;
		if (strcmp(key, "file") == 0) {
			free(*file);
			if ((*file = strdup(lx->tok)) == NULL)
				return RESTAUTH_ERR_NOMEM;
		}
	}
	if (!is(lx, ";"))
		goto bad;
	return 0;
bad:
	return refuse(lx, what,
	              "the KafkaConnect entry is not \"" MODULE " required "
	              "file=\\\"...\\\";\"",
	              errbuf, errlen);
}

/* The file option of text's KafkaConnect entry, malloc'd. The whole text
 * is read, as Java's ConfigFile reads it: an error anywhere refuses it, and
 * so does a second KafkaConnect entry. */
static int jaas_file(const char *text, size_t len, const char *what, char **out, char *errbuf,
                     size_t errlen)
{
	struct lexer lx = {.text = text, .p = text, .end = text + len};
	int rc, first = 0;

	*out = NULL;
	while (next(&lx)) {
		bool ours = is(&lx, "KafkaConnect");

		if (ours && first != 0) {
			snprintf(
			    errbuf, errlen,
			    "%s:%d: a second KafkaConnect entry (the first is on line %d): Java "
			    "refuses it too (\"Can not specify multiple entries for "
			    "KafkaConnect\")",
			    what, line_of(&lx, lx.at), first);
			return RESTAUTH_ERR_CONFIG;
		}
		if (ours)
			first = line_of(&lx, lx.at);
		if (!next(&lx) || !is(&lx, "{"))
			goto bad;
		while (next(&lx) && !is(&lx, "}")) {
			if (!ours) {
				while (!is(&lx, ";") && next(&lx))
					;
				continue;
			}
			if ((rc = module(&lx, out, what, errbuf, errlen)) != 0)
				return rc;
		}
		if (!is(&lx, "}") || !next(&lx) || !is(&lx, ";"))
			goto bad;
	}
	if (lx.unclosed)
		goto bad;
	if (*out == NULL || (*out)[0] == '\0') {
		snprintf(errbuf, errlen,
		         "%s: no KafkaConnect entry with " MODULE " and its file=\"...\" option "
		         "(Connect's \"Property Credentials file must be specified\")",
		         what);
		return RESTAUTH_ERR_CONFIG;
	}
	return 0;
bad:
	return refuse(&lx, what, "not a JAAS configuration", errbuf, errlen);
}

static int read_jaas(const char *path, char **text, size_t *len, const char *where, char *errbuf,
                     size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t n = 0;

	*text = NULL;
	if (f == NULL) {
		snprintf(errbuf, errlen, "%s: JAAS file %s: %s", where, path, strerror(errno));
		return RESTAUTH_ERR;
	}
	buf = malloc(MAX_JAAS_BYTES + 1);
	if (buf == NULL) {
		fclose(f);
		return RESTAUTH_ERR_NOMEM;
	}
	n = fread(buf, 1, MAX_JAAS_BYTES + 1, f);
	if (ferror(f) || n > MAX_JAAS_BYTES) {
		snprintf(errbuf, errlen, "%s: JAAS file %s: %s", where, path,
		         ferror(f) ? strerror(errno) : "larger than 64 KiB");
		fclose(f);
		free(buf);
		return RESTAUTH_ERR;
	}
	fclose(f);
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

/* Reads both files into users and file (replaced only when both read). */
static int load(const char *jaas, const char *where, char **file, struct props **users,
                char *errbuf, size_t errlen)
{
	char what[1200], why[1024], *text = NULL, *f = NULL;
	struct props *p = NULL;
	size_t len = 0;
	int rc;

	if ((rc = read_jaas(jaas, &text, &len, where, errbuf, errlen)) != 0)
		return rc;
	snprintf(what, sizeof(what), "%s: JAAS file %s", where, jaas);
	rc = jaas_file(text, len, what, &f, errbuf, errlen);
	free(text);
	if (rc != 0)
		goto out;
	if (props_load_file(f, &p, why, sizeof(why)) != 0) {
		snprintf(errbuf, errlen, "%s: credentials file: %s", what, why);
		rc = RESTAUTH_ERR;
		goto out;
	}
	if (props_count(p) == 0) {
		snprintf(errbuf, errlen,
		         "%s: credentials file %s has no user: Connect would let every request in; "
		         "skiff refuses (give user: password lines)",
		         what, f);
		rc = RESTAUTH_ERR_CONFIG;
		goto out;
	}
	free(*file);
	props_destroy(*users);
	*file = f;
	*users = p;
	f = NULL;
	p = NULL;
out:
	free(f);
	props_destroy(p);
	return rc;
}

int restauth_new(const char *jaas, const char *where, struct restauth **out, char *errbuf,
                 size_t errlen)
{
	struct restauth *a = calloc(1, sizeof(*a));
	int rc = RESTAUTH_ERR_NOMEM;

	*out = NULL;
	if (a == NULL || (a->jaas = strdup(jaas)) == NULL || (a->where = strdup(where)) == NULL)
		goto out;
	rc = load(a->jaas, a->where, &a->file, &a->users, errbuf, errlen);
	if (rc != 0)
		goto out;
	*out = a;
	a = NULL;
out:
	if (rc == RESTAUTH_ERR_NOMEM)
		snprintf(errbuf, errlen, "%s: out of memory", where);
	restauth_destroy(a);
	return rc;
}

size_t restauth_files(const struct restauth *a, const char **paths, size_t max)
{
	size_t n = 0;

	if (n < max)
		paths[n++] = a->jaas;
	if (n < max)
		paths[n++] = a->file;
	return n;
}

int restauth_reload(struct restauth *a, char *errbuf, size_t errlen)
{
	return load(a->jaas, a->where, &a->file, &a->users, errbuf, errlen);
}

/* Compares without stopping at the first difference. */
static bool same(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);
	unsigned char d = alen != blen;

	for (size_t i = 0; i < alen; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)b[i < blen ? i : 0];
	return d == 0;
}

bool restauth_check(const struct restauth *a, const char *authorization)
{
	char decoded[MAX_CREDENTIALS + 1], user[MAX_CREDENTIALS + 1];
	const char *space, *colon, *want;
	size_t n, ulen;

	if (a == NULL)
		return true;
	if (authorization == NULL || (space = strchr(authorization, ' ')) == NULL ||
	    space == authorization || (size_t)(space - authorization) != 5 ||
	    strncasecmp(authorization, "Basic", 5) != 0)
		return false;
	if (text_unbase64(space + 1, strlen(space + 1), decoded, MAX_CREDENTIALS, &n) != 0)
		return false;
	decoded[n] = '\0';
	colon = memchr(decoded, ':', n);
	if (colon == NULL || colon == decoded || memchr(decoded, '\0', n) != NULL)
		return false;
	ulen = (size_t)(colon - decoded);
	memcpy(user, decoded, ulen);
	user[ulen] = '\0';
	want = props_get(a->users, user);
	return want != NULL && same(colon + 1, n - ulen - 1, want);
}

size_t restauth_users(const struct restauth *a)
{
	return a != NULL ? props_count(a->users) : 0;
}

void restauth_destroy(struct restauth *a)
{
	if (a == NULL)
		return;
	free(a->jaas);
	free(a->where);
	free(a->file);
	props_destroy(a->users);
	free(a);
}
