/* restguard: Host and Origin checks of the REST API (restguard.h). */
#include "control/restguard.h"

#include "control/rest.h"

#include <arpa/inet.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Splits "host[:port]" or "[v6][:port]" into host (without brackets) and
 * port ("" when absent). Returns false when it is not that. */
static bool split_authority(const char *a, size_t alen, char *host, size_t hlen, char *port,
                            size_t plen)
{
	const char *colon = NULL, *h = a, *end = a + alen;
	size_t n;

	if (alen > 0 && a[0] == '[') {
		const char *close = memchr(a, ']', alen);

		if (close == NULL || (close + 1 < end && close[1] != ':'))
			return false;
		h = a + 1;
		n = (size_t)(close - h);
		colon = close + 1 < end ? close + 1 : NULL;
	} else {
		colon = memchr(a, ':', alen);
		n = colon ? (size_t)(colon - a) : alen;
		if (colon != NULL && memchr(colon + 1, ':', (size_t)(end - colon - 1)) != NULL)
			return false;
	}
	if (n == 0 || n >= hlen)
		return false;
	memcpy(host, h, n);
	host[n] = '\0';
	n = colon ? (size_t)(end - colon - 1) : 0;
	if (n >= plen || (colon != NULL && (n == 0 || strspn(colon + 1, "0123456789") < n)))
		return false;
	memcpy(port, colon ? colon + 1 : "", n);
	port[n] = '\0';
	return true;
}

static bool is_ip(const char *host)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

bool restguard_host_ok(const struct rest_policy *p, const char *host)
{
	char h[256], port[8];
	size_t n;

	if (p == NULL || host == NULL)
		return true;
	if (!split_authority(host, strlen(host), h, sizeof(h), port, sizeof(port)))
		return false;
	n = strlen(h);
	if (n > 1 && h[n - 1] == '.')
		h[n - 1] = '\0'; /* "localhost." is localhost */
	if (is_ip(h) || strcasecmp(h, "localhost") == 0)
		return true;
	for (size_t i = 0; i < p->nnames; i++)
		if (p->names[i] != NULL && strcasecmp(h, p->names[i]) == 0)
			return true;
	return false;
}

/* "host:port" with the scheme's default port made explicit. */
static bool normal(const char *authority, size_t len, bool https, char *out, size_t olen)
{
	char h[256], port[8];

	if (!split_authority(authority, len, h, sizeof(h), port, sizeof(port)))
		return false;
	snprintf(out, olen, "%s:%s", h, port[0] ? port : https ? "443" : "80");
	return true;
}

bool restguard_origin_ok(const struct rest_policy *p, const char *origin, const char *host)
{
	char a[300], b[300];
	const char *want = p != NULL && p->https ? "https://" : "http://";
	size_t wlen = strlen(want);

	if (p == NULL || origin == NULL)
		return true;
	if (restguard_origin_listed(p, origin))
		return true;
	/* Same origin: the listener's scheme, and the authority the request
	 * itself names in Host. */
	return host != NULL && strncasecmp(origin, want, wlen) == 0 &&
	       normal(origin + wlen, strlen(origin + wlen), p->https, a, sizeof(a)) &&
	       normal(host, strlen(host), p->https, b, sizeof(b)) && strcasecmp(a, b) == 0;
}

bool restguard_origin_listed(const struct rest_policy *p, const char *origin)
{
	const char *s;

	if (p == NULL || origin == NULL || p->allow_origin == NULL)
		return false;
	for (s = p->allow_origin; *s != '\0';) {
		size_t n = strcspn(s, ","), lead = strspn(s, " \t");
		char item[512];

		if (n > lead) {
			size_t len = n - lead;

			while (len > 0 && (s[lead + len - 1] == ' ' || s[lead + len - 1] == '\t'))
				len--;
			if (len < sizeof(item)) {
				memcpy(item, s + lead, len);
				item[len] = '\0';
				/* Jetty's CrossOriginFilter: "*" alone, or * inside an
				 * origin as a wildcard. */
				if (strcmp(item, "*") == 0 ||
				    fnmatch(item, origin, FNM_CASEFOLD) == 0)
					return true;
			}
		}
		s += n;
		if (*s == ',')
			s++;
	}
	return false;
}

bool restguard_method_listed(const struct rest_policy *p, const char *method)
{
	const char *list = p != NULL && p->allow_methods != NULL && p->allow_methods[0] != '\0'
	                       ? p->allow_methods
	                       : "GET,POST,HEAD";
	size_t mlen = strlen(method);

	for (const char *s = list; *s != '\0';) {
		size_t lead = strspn(s, " \t"), n = strcspn(s, ",");

		if (n >= lead + mlen && strncasecmp(s + lead, method, mlen) == 0 &&
		    strspn(s + lead + mlen, " \t") == n - lead - mlen)
			return true;
		s += n;
		if (*s == ',')
			s++;
	}
	return false;
}

bool restguard_json(const char *ct)
{
	size_t n;

	if (ct == NULL)
		return false;
	ct += strspn(ct, " \t");
	n = strcspn(ct, "; \t");
	return n == 16 && strncasecmp(ct, "application/json", 16) == 0;
}
