/* txconf: one transform's view of its properties (txops.h). */
#include "transform/txops.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int find(const struct txconf *c, const char *key)
{
	/* The last setting wins, as in a properties file. */
	for (size_t i = c->n; i-- > 0;)
		if (strcmp(c->keys[i], key) == 0)
			return (int)i;
	return -1;
}

const char *txconf_get(const struct txconf *c, const char *key)
{
	int i = find(c, key);

	return i < 0 ? NULL : c->values[i];
}

int txconf_error(const struct txconf *c, const char *key, char *errbuf, size_t errlen,
                 const char *fmt, ...)
{
	int i = find(c, key);
	size_t n;
	va_list ap;

	if (i >= 0)
		snprintf(errbuf, errlen, "%s: %s%s: ", c->wheres[i], c->prefix, key);
	else
		snprintf(errbuf, errlen, "%s: %s%s: ", c->listed, c->prefix, key);
	n = strlen(errbuf);
	va_start(ap, fmt);
	vsnprintf(errbuf + n, errlen > n ? errlen - n : 0, fmt, ap);
	va_end(ap);
	return TX_ERR;
}

int txconf_require(const struct txconf *c, const char *key, const char **out, char *errbuf,
                   size_t errlen)
{
	*out = txconf_get(c, key);
	if (*out == NULL || **out == '\0')
		return txconf_error(c, key, errbuf, errlen, "missing required property");
	return 0;
}

/* Java's \s, around a LIST's commas (ConfigDef splits on \s*,\s*). */
static bool blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
}

size_t txconf_list_item(const char *v, size_t i, const char **item)
{
	const char *p = v;

	while (p != NULL && *p != '\0') {
		const char *end = strchr(p, ',');
		const char *e = end ? end : p + strlen(p);
		const char *s = p;

		while (s < e && blank(*s))
			s++;
		while (e > s && blank(e[-1]))
			e--;
		if (e > s && i-- == 0) {
			*item = s;
			return (size_t)(e - s);
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

bool txconf_list_has(const char *v, const char *name)
{
	const char *it;
	size_t n;

	for (size_t i = 0; (n = txconf_list_item(v, i, &it)) > 0; i++)
		if (n == strlen(name) && memcmp(it, name, n) == 0)
			return true;
	return false;
}
