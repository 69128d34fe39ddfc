/* rstr: see rstr.h. */
#include "util/rstr.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct rstr {
	uint32_t refs;
	char s[];
};

static struct rstr *of(const char *s)
{
	return (struct rstr *)(void *)(s - offsetof(struct rstr, s));
}

char *rstr_new(const char *s, size_t len)
{
	struct rstr *r;

	if (len > SIZE_MAX - sizeof(*r) - 1 || (r = malloc(sizeof(*r) + len + 1)) == NULL)
		return NULL;
	r->refs = 1;
	if (s != NULL)
		memcpy(r->s, s, len);
	r->s[len] = '\0';
	return r->s;
}

const char *rstr_hold(const char *s)
{
	of(s)->refs++;
	return s;
}

void rstr_drop(const char *s)
{
	struct rstr *r;

	if (s == NULL)
		return;
	r = of(s);
	if (--r->refs == 0)
		free(r);
}
