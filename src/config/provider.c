/* provider: Connect's config providers and ConfigTransformer's references.
 *
 * The reference syntax is ConfigTransformer's pattern of Kafka 3.9,
 * \$\{([^}]*?):(([^}]*?):)?([^}]*?)\}, done by hand: from a "${", the text up
 * to the next '}' must hold a ':'; before the first ':' is the provider, and
 * a second ':' splits path from key (the key may hold more). Without a ':'
 * the "${" is text and the search goes on from the next byte, as
 * Matcher.find() does; after a reference it goes on past its '}'. The
 * behaviour of each provider was read off Kafka 3.9.1's classes run on the
 * JVM (see tests/unit/test_provider.c for the cases). */
#include "config/provider.h"

#include "util/buf.h"
#include "config/props.h"
#include "util/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PREFIX "config.providers"

enum kind { P_ENV, P_FILE, P_DIR };

static const struct {
	enum kind kind;
	const char *simple;
} classes[] = {
    {P_ENV, "EnvVarConfigProvider"},
    {P_FILE, "FileConfigProvider"},
    {P_DIR, "DirectoryConfigProvider"},
};

#define CLASS_PACKAGE "org.apache.kafka.common.config.provider."

struct provider {
	char *name;
	enum kind kind;
	bool has_allow; /* env: allowlist.pattern */
	regex_t allow;
	char **paths; /* file, dir: allowed.paths, normalised; NULL: any */
	size_t npaths;
};

/* A properties file FileConfigProvider read, kept so that every reference
 * to it sees the same content within one load. */
struct loaded {
	char *path;
	struct props *p;
};

struct providers {
	struct provider *v;
	size_t n;
	struct loaded *files;
	size_t nfiles;
	char **notices, **refs;
	size_t nnotices, nrefs;
};

static int fail(char *errbuf, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *errbuf, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

static int push(char ***arr, size_t *n, const char *s)
{
	char **grown = realloc(*arr, (*n + 1) * sizeof(*grown));

	if (grown == NULL)
		return -1;
	*arr = grown;
	grown[*n] = strdup(s);
	return grown[*n] != NULL ? (int)(++*n, 0) : -1;
}

static char *trimmed(const char *s, size_t len)
{
	while (len > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	return strndup(s, len);
}

static const char *kind_class(enum kind k)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (classes[i].kind == k)
			return classes[i].simple;
	return "?";
}

/* Connect names the class in full; the simple name is accepted too. */
static int find_class(const char *cls, enum kind *out)
{
	size_t plen = strlen(CLASS_PACKAGE);

	if (strncmp(cls, CLASS_PACKAGE, plen) == 0)
		cls += plen;
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (strcmp(cls, classes[i].simple) == 0) {
			*out = classes[i].kind;
			return 0;
		}
	}
	return -1;
}

static struct provider *find(const struct providers *pv, const char *name, size_t len)
{
	for (size_t i = 0; i < pv->n; i++)
		if (strlen(pv->v[i].name) == len && strncmp(pv->v[i].name, name, len) == 0)
			return &pv->v[i];
	return NULL;
}

/* Java's Path.normalize() of an absolute path: no ".", no "..", no "//". */
static char *normalise(const char *path)
{
	char *out = malloc(strlen(path) + 2);
	size_t len = 0;
	const char *p = path;

	if (out == NULL)
		return NULL;
	while (*p != '\0') {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--; /* the '/' before it; "/.." is "/" */
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
		}
		p += n + (slash != NULL);
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	return out;
}

/* Path.startsWith: the same components, not the same bytes ("/a/bc" does
 * not start with "/a/b"). Both normalised. */
static bool starts_with(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int set_allowed_paths(struct provider *p, const char *v, const char *where, char *errbuf,
                             size_t errlen)
{
	while (v != NULL && *v != '\0') {
		const char *comma = strchr(v, ',');
		size_t n = comma ? (size_t)(comma - v) : strlen(v);
		char *raw = trimmed(v, n), *norm = NULL;
		int rc = 0;

		if (raw == NULL || (raw[0] == '/' && (norm = normalise(raw)) == NULL))
			rc = fail(errbuf, errlen, PROVIDER_ERR_NOMEM, "%s: out of memory", where);
		else if (raw[0] != '\0' && raw[0] != '/')
			rc = fail(errbuf, errlen, PROVIDER_ERR_CONFIG,
			          "%s: allowed.paths: '%s' is not an absolute path (as Connect "
			          "requires)",
			          where, raw);
		else if (norm != NULL && push(&p->paths, &p->npaths, norm) != 0)
			rc = fail(errbuf, errlen, PROVIDER_ERR_NOMEM, "%s: out of memory", where);
		free(raw);
		free(norm);
		if (rc != 0)
			return rc;
		v = comma ? comma + 1 : NULL;
	}
	return 0;
}

/* One config.providers.NAME.param.PARAM=value. */
static int set_param(struct providers *pv, struct provider *p, const char *param, const char *v,
                     const char *where, char *errbuf, size_t errlen)
{
	char note[1024];

	if (p->kind == P_ENV && strcmp(param, "allowlist.pattern") == 0) {
		if (p->has_allow)
			regfree(&p->allow);
		p->has_allow = false;
		/* Java's Pattern.asPredicate(): found anywhere in the name. */
		if (regcomp(&p->allow, v, REG_EXTENDED | REG_NOSUB) != 0)
			return fail(errbuf, errlen, PROVIDER_ERR_CONFIG,
			            "%s: allowlist.pattern: '%s' is not a regular expression",
			            where, v);
		p->has_allow = true;
		return 0;
	}
	if (p->kind != P_ENV && strcmp(param, "allowed.paths") == 0)
		return set_allowed_paths(p, v, where, errbuf, errlen);
	/* Bounded pieces: a long path or key is cut, not the sentence. */
	snprintf(note, sizeof(note),
	         "%.600s: %s has no parameter '%.200s'; ignored (as Connect does)", where,
	         kind_class(p->kind), param);
	return push(&pv->notices, &pv->nnotices, note) == 0
	           ? 0
	           : fail(errbuf, errlen, PROVIDER_ERR_NOMEM, "%s: out of memory", where);
}

/* "file:line" of key in w (it is there), for messages. */
static const char *line_of(const struct props *w, const char *key, char *out, size_t len)
{
	for (size_t i = 0; i < props_count(w); i++)
		if (strcmp(props_key(w, i), key) == 0)
			snprintf(out, len, "%s:%d", props_name(w), props_line(w, i));
	return out;
}

/* Declares each name of config.providers with its class. */
static int declare(struct providers *pv, const struct props *w, char *errbuf, size_t errlen)
{
	const char *list = props_get(w, PREFIX);

	while (list != NULL && *list != '\0') {
		const char *comma = strchr(list, ',');
		char *name = trimmed(list, comma ? (size_t)(comma - list) : strlen(list));
		char key[512], at[1024] = "";
		const char *cls;
		struct provider *p;

		if (name == NULL)
			return fail(errbuf, errlen, PROVIDER_ERR_NOMEM, "out of memory");
		list = comma ? comma + 1 : NULL;
		if (*name == '\0' || find(pv, name, strlen(name)) != NULL) {
			free(name);
			continue;
		}
		p = &pv->v[pv->n];
		*p = (struct provider){.name = name};
		pv->n++;
		snprintf(key, sizeof(key), PREFIX ".%s.class", name);
		cls = props_get(w, key);
		if (cls == NULL)
			return fail(errbuf, errlen, PROVIDER_ERR_CONFIG,
			            "%s: " PREFIX ": provider '%s' has no %s",
			            line_of(w, PREFIX, at, sizeof(at)), name, key);
		while (*cls == ' ' || *cls == '\t')
			cls++;
		if (find_class(cls, &p->kind) != 0)
			return fail(errbuf, errlen, PROVIDER_ERR_CONFIG,
			            "%s: %s: '%s' is not a provider skiff has "
			            "(EnvVarConfigProvider, FileConfigProvider, "
			            "DirectoryConfigProvider)",
			            line_of(w, key, at, sizeof(at)), key, cls);
	}
	return 0;
}

static size_t count_names(const char *list)
{
	size_t n = 1;

	for (; list != NULL && *list != '\0'; list++)
		n += *list == ',';
	return n;
}

/* Reads every config.providers.NAME.param.PARAM of w. */
static int read_params(struct providers *pv, const struct props *w, char *errbuf, size_t errlen)
{
	size_t plen = strlen(PREFIX ".");

	for (size_t i = 0; i < props_count(w); i++) {
		const char *key = props_key(w, i), *rest, *dot;
		char where[1024];
		struct provider *p;

		if (strncmp(key, PREFIX ".", plen) != 0)
			continue;
		rest = key + plen;
		dot = strchr(rest, '.');
		p = dot ? find(pv, rest, (size_t)(dot - rest)) : NULL;
		if (p == NULL || strncmp(dot, ".param.", 7) != 0)
			continue; /* a class, or an undeclared provider's: unused, as in Connect */
		snprintf(where, sizeof(where), "%s:%d: %s", props_name(w), props_line(w, i), key);
		if (set_param(pv, p, dot + 7, props_value(w, i), where, errbuf, errlen) != 0)
			return -1;
	}
	return 0;
}

int providers_new(const struct props *w, struct providers **out, char *errbuf, size_t errlen)
{
	struct providers *pv = calloc(1, sizeof(*pv));
	int rc = PROVIDER_ERR_NOMEM;

	*out = NULL;
	if (pv == NULL)
		return fail(errbuf, errlen, rc, "out of memory");
	pv->v = calloc(count_names(props_get(w, PREFIX)), sizeof(*pv->v));
	if (pv->v == NULL) {
		fail(errbuf, errlen, rc, "out of memory");
		goto out;
	}
	if ((rc = declare(pv, w, errbuf, errlen)) != 0)
		goto out;
	if (read_params(pv, w, errbuf, errlen) != 0) {
		rc = PROVIDER_ERR_CONFIG;
		goto out;
	}
	*out = pv;
	pv = NULL;
	rc = 0;
out:
	providers_destroy(pv);
	return rc;
}

bool providers_is_declaration(const char *key)
{
	return strcmp(key, PREFIX) == 0 || strncmp(key, PREFIX ".", strlen(PREFIX ".")) == 0;
}

/* ---- one reference --------------------------------------------------------- */

struct ref {
	const struct provider *p;
	char *path, *key; /* owned */
	const char *where;
};

/* The path as the provider opens it: normalised when allowed.paths is set,
 * and then inside one of them (Connect would keep the reference as text). */
static int allowed(const struct ref *r, char **out, char *errbuf, size_t errlen)
{
	char *norm;

	*out = NULL;
	if (r->p->npaths == 0) {
		*out = strdup(r->path);
		return *out ? 0 : fail(errbuf, errlen, PROVIDER_ERR_NOMEM, "out of memory");
	}
	norm = normalise(r->path);
	if (norm == NULL)
		return fail(errbuf, errlen, PROVIDER_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < r->p->npaths; i++) {
		if (r->path[0] == '/' && starts_with(norm, r->p->paths[i])) {
			*out = norm;
			return 0;
		}
	}
	free(norm);
	return fail(errbuf, errlen, PROVIDER_ERR_CONFIG, "%s is outside allowed.paths", r->path);
}

static int env_get(const struct ref *r, struct buf *o, char *errbuf, size_t errlen)
{
	const char *v;

	if (r->path[0] != '\0')
		return fail(errbuf, errlen, PROVIDER_ERR_CONFIG,
		            "a path ('%s') is not supported for EnvVarConfigProvider", r->path);
	if (r->p->has_allow && regexec(&r->p->allow, r->key, 0, NULL, 0) != 0)
		return fail(errbuf, errlen, PROVIDER_ERR_CONFIG, "%s is outside allowlist.pattern",
		            r->key);
	v = getenv(r->key);
	if (v == NULL)
		return fail(errbuf, errlen, PROVIDER_ERR_CONFIG, "%s is not set", r->key);
	return buf_addz(o, v) == 0
	           ? 0
	           : fail(errbuf, errlen, PROVIDER_ERR_CONFIG, "the value is longer than %d bytes",
	                  PROVIDER_MAX_VALUE_BYTES);
}

static int file_get(struct providers *pv, const struct ref *r, struct buf *o, char *errbuf,
                    size_t errlen)
{
	struct props *p = NULL;
	char *path = NULL;
	const char *v;
	int rc;

	if (r->path[0] == '\0')
		return fail(errbuf, errlen, PROVIDER_ERR_CONFIG,
		            "no path: write ${%s:/path/to/file.properties:%s}", r->p->name, r->key);
	if ((rc = allowed(r, &path, errbuf, errlen)) != 0)
		return rc;
	for (size_t i = 0; i < pv->nfiles && p == NULL; i++)
		if (strcmp(pv->files[i].path, path) == 0)
			p = pv->files[i].p;
	if (p == NULL) {
		struct loaded *grown = realloc(pv->files, (pv->nfiles + 1) * sizeof(*grown));

		rc = PROVIDER_ERR_NOMEM;
		if (grown == NULL)
			goto out;
		pv->files = grown;
		rc = PROVIDER_ERR_CONFIG;
		if (props_load_file(path, &p, errbuf, errlen) != 0)
			goto out;
		grown[pv->nfiles++] = (struct loaded){.path = path, .p = p};
		path = NULL;
	}
	v = props_get(p, r->key);
	if (v == NULL)
		rc = fail(errbuf, errlen, PROVIDER_ERR_CONFIG, "%s has no key '%s'", props_name(p),
		          r->key);
	else if (buf_addz(o, v) != 0)
		rc = fail(errbuf, errlen, PROVIDER_ERR_CONFIG, "the value is longer than %d bytes",
		          PROVIDER_MAX_VALUE_BYTES);
	else
		rc = 0;
out:
	free(path);
	return rc;
}

/* Reads the whole of an open regular file into o (UTF-8, no NUL byte). */
static int read_whole(int fd, const char *path, struct buf *o, char *errbuf, size_t errlen)
{
	size_t start = buf_len(o);
	char chunk[4096];
	ssize_t got;

	while ((got = read(fd, chunk, sizeof(chunk))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return fail(errbuf, errlen, PROVIDER_ERR_CONFIG, "%s: %s", path,
			            strerror(errno));
		if (buf_add(o, chunk, (size_t)got) != 0)
			return fail(errbuf, errlen, PROVIDER_ERR_CONFIG, "%s: larger than %d bytes",
			            path, PROVIDER_MAX_VALUE_BYTES);
	}
	if (memchr(buf_ptr(o) + start, '\0', buf_len(o) - start) != NULL ||
	    !utf8_valid(buf_ptr(o) + start, buf_len(o) - start))
		return fail(errbuf, errlen, PROVIDER_ERR_CONFIG, "%s: not UTF-8 text", path);
	return 0;
}

static int dir_get(const struct ref *r, struct buf *o, char *errbuf, size_t errlen)
{
	char *dir = NULL, file[4096];
	struct stat st;
	int fd = -1, rc;

	if (r->path[0] == '\0')
		return fail(errbuf, errlen, PROVIDER_ERR_CONFIG,
		            "no path: write ${%s:/path/to/directory:%s}", r->p->name, r->key);
	if ((rc = allowed(r, &dir, errbuf, errlen)) != 0)
		return rc;
	rc = PROVIDER_ERR_CONFIG;
	if (stat(dir, &st) != 0) {
		fail(errbuf, errlen, rc, "%s: %s", dir, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		fail(errbuf, errlen, rc, "%s: not a directory", dir);
		goto out;
	}
	/* Connect lists the directory's regular files: a key is a name in it. */
	if (r->key[0] == '\0' || strchr(r->key, '/') != NULL || strcmp(r->key, ".") == 0 ||
	    strcmp(r->key, "..") == 0) {
		fail(errbuf, errlen, rc, "'%s' is not a file name", r->key);
		goto out;
	}
	snprintf(file, sizeof(file), "%s/%s", dir, r->key);
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fail(errbuf, errlen, rc, "%s: %s", file,
		     fd < 0 ? strerror(errno) : "not a regular file");
		goto out;
	}
	rc = read_whole(fd, file, o, errbuf, errlen);
out:
	if (fd >= 0)
		close(fd);
	free(dir);
	return rc;
}

/* Appends the value of reference r to o, or says why not. */
static int lookup(struct providers *pv, const struct ref *r, struct buf *o, char *errbuf,
                  size_t errlen)
{
	char why[1024];
	int rc;

	switch (r->p->kind) {
	case P_ENV:
		rc = env_get(r, o, why, sizeof(why));
		break;
	case P_FILE:
		rc = file_get(pv, r, o, why, sizeof(why));
		break;
	default:
		rc = dir_get(r, o, why, sizeof(why));
		break;
	}
	if (rc == 0 && buf_err(o) != 0)
		snprintf(why, sizeof(why), "the value is longer than %d bytes",
		         PROVIDER_MAX_VALUE_BYTES);
	if (rc == 0 && buf_err(o) == 0)
		return 0;
	fail(errbuf, errlen, rc, "%s: %s (%s): %s", r->where, r->p->name, kind_class(r->p->kind),
	     why);
	return rc == PROVIDER_ERR_NOMEM ? rc : PROVIDER_ERR_CONFIG;
}

/* ---- a value ----------------------------------------------------------------- */

bool providers_next_ref(const char *s, size_t *at, size_t *start, size_t *end, size_t span[3][2])
{
	const char *p = s + *at;

	while ((p = strstr(p, "${")) != NULL) {
		const char *close = strchr(p + 2, '}'), *c1, *c2;

		if (close == NULL)
			return false; /* no '}' after this "${", so none after a later one */
		c1 = memchr(p + 2, ':', (size_t)(close - p - 2));
		if (c1 == NULL) {
			p++;
			continue;
		}
		c2 = memchr(c1 + 1, ':', (size_t)(close - c1 - 1));
		span[0][0] = (size_t)(p + 2 - s);
		span[0][1] = (size_t)(c1 - s);
		span[1][0] = span[1][1] = (size_t)(c1 + 1 - s);
		if (c2 != NULL)
			span[1][1] = (size_t)(c2 - s);
		span[2][0] = (size_t)((c2 ? c2 : c1) + 1 - s);
		span[2][1] = (size_t)(close - s);
		*start = (size_t)(p - s);
		*end = *at = (size_t)(close + 1 - s);
		return true;
	}
	return false;
}

static int note_unknown(struct providers *pv, const char *where, const char *s, size_t span[2])
{
	char note[1536];

	snprintf(note, sizeof(note),
	         "%s: ${%.*s:...} names no provider of " PREFIX "; left as text (as Connect does)",
	         where, (int)(span[1] - span[0]), s + span[0]);
	return push(&pv->notices, &pv->nnotices, note);
}

static int note_ref(struct providers *pv, const char *where, const char *s, size_t a, size_t b)
{
	char line[1536];

	snprintf(line, sizeof(line), "%s <- %.*s", where, (int)(b - a), s + a);
	return push(&pv->refs, &pv->nrefs, line);
}

int providers_expand(struct providers *pv, const char *value, const char *where, char **out,
                     bool *secret, char *errbuf, size_t errlen)
{
	struct buf o;
	size_t at = 0, copied = 0, start, end, span[3][2];
	int rc = PROVIDER_ERR_NOMEM;

	*out = NULL;
	*secret = false;
	buf_init(&o, PROVIDER_MAX_VALUE_BYTES);
	while (providers_next_ref(value, &at, &start, &end, span)) {
		struct ref r = {.where = where};

		r.p = find(pv, value + span[0][0], span[0][1] - span[0][0]);
		if (r.p == NULL) {
			if (note_unknown(pv, where, value, span[0]) != 0)
				goto nomem;
			continue;
		}
		r.path = strndup(value + span[1][0], span[1][1] - span[1][0]);
		r.key = strndup(value + span[2][0], span[2][1] - span[2][0]);
		rc = PROVIDER_ERR_NOMEM;
		if (r.path != NULL && r.key != NULL &&
		    buf_add(&o, value + copied, start - copied) == 0)
			rc = lookup(pv, &r, &o, errbuf, errlen);
		free(r.path);
		free(r.key);
		if (rc == 0 && note_ref(pv, where, value, start, end) != 0)
			rc = PROVIDER_ERR_NOMEM;
		if (rc != 0)
			goto fail;
		copied = end;
		*secret = true;
	}
	if (buf_addz(&o, value + copied) != 0 || buf_take(&o, out, NULL) != 0) {
		rc = fail(errbuf, errlen, PROVIDER_ERR_CONFIG,
		          "%s: the value is longer than %d bytes", where, PROVIDER_MAX_VALUE_BYTES);
		goto fail;
	}
	return 0;
nomem:
	rc = PROVIDER_ERR_NOMEM;
fail:
	if (rc == PROVIDER_ERR_NOMEM)
		fail(errbuf, errlen, rc, "%s: out of memory", where);
	buf_free(&o);
	*secret = false;
	return rc;
}

int providers_resolve(struct providers *pv, struct props *p, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < props_count(p); i++) {
		const char *key = props_key(p, i), *v = props_value(p, i);
		char where[1024], *got = NULL;
		bool secret;
		int rc;

		if (providers_is_declaration(key) || strstr(v, "${") == NULL)
			continue;
		snprintf(where, sizeof(where), "%s:%d: %s", props_name(p), props_line(p, i), key);
		rc = providers_expand(pv, v, where, &got, &secret, errbuf, errlen);
		if (rc == 0 && secret && props_set_value(p, i, got, true) != 0)
			rc = fail(errbuf, errlen, PROVIDER_ERR_NOMEM, "%s: out of memory", where);
		free(got);
		if (rc != 0)
			return rc;
	}
	return 0;
}

size_t providers_notice_count(const struct providers *pv)
{
	return pv ? pv->nnotices : 0;
}

const char *providers_notice(const struct providers *pv, size_t i)
{
	return pv->notices[i];
}

void providers_print(const struct providers *pv, FILE *fp)
{
	if (pv == NULL)
		return;
	for (size_t i = 0; i < pv->n; i++)
		fprintf(fp, "# config provider %s: " CLASS_PACKAGE "%s\n", pv->v[i].name,
		        kind_class(pv->v[i].kind));
	for (size_t i = 0; i < pv->nrefs; i++)
		fprintf(fp, "#   %s\n", pv->refs[i]);
}

void providers_destroy(struct providers *pv)
{
	if (pv == NULL)
		return;
	for (size_t i = 0; i < pv->n; i++) {
		free(pv->v[i].name);
		if (pv->v[i].has_allow)
			regfree(&pv->v[i].allow);
		for (size_t j = 0; j < pv->v[i].npaths; j++)
			free(pv->v[i].paths[j]);
		free(pv->v[i].paths);
	}
	for (size_t i = 0; i < pv->nfiles; i++) {
		free(pv->files[i].path);
		props_destroy(pv->files[i].p);
	}
	for (size_t i = 0; i < pv->nnotices; i++)
		free(pv->notices[i]);
	for (size_t i = 0; i < pv->nrefs; i++)
		free(pv->refs[i]);
	free(pv->v);
	free(pv->files);
	free(pv->notices);
	free(pv->refs);
	free(pv);
}
