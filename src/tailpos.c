/* tailpos: the file source's offset value. */
#include "tailpos.h"

#include "jsonint.h"
#include "tailid.h"

#include <stdio.h>
#include <string.h>

int tailpos_parse(const char *json, struct tailpos *out)
{
	int64_t fp = 0;

	memset(out, 0, sizeof(*out));
	if (json == NULL || jsonint_get(json, "position", &out->pos) != 0 || out->pos < 0)
		return -1;
	out->known = true;
	out->has_id = jsonint_get(json, "dev", &out->dev) == 0 &&
		      jsonint_get(json, "ino", &out->ino) == 0;
	out->has_fp = jsonint_get(json, "fp", &fp) == 0 &&
		      jsonint_get(json, "fplen", &out->fplen) == 0 && out->fplen >= 0 &&
		      out->fplen <= TAILID_FP_MAX && out->fplen <= out->pos;
	out->fp = (uint64_t)fp;
	out->has_born = jsonint_get(json, "born", &out->born) == 0;
	out->finished = jsonint_get(json, "finished", &fp) == 0 && fp == 1;
	return 0;
}

int tailpos_format(const struct src_offset *off, int64_t born, char *buf, size_t len)
{
	int64_t fplen = off->v[0] < TAILID_FP_MAX ? off->v[0] : TAILID_FP_MAX;
	int n = snprintf(buf, len,
			 "{\"position\":%lld,\"dev\":%lld,\"ino\":%lld,\"fp\":%lld,\"fplen\":%lld",
			 (long long)off->v[0], (long long)off->v[1], (long long)off->v[2],
			 (long long)off->v[3], (long long)fplen);

	if (n > 0 && born >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ",\"born\":%lld", (long long)born);
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "}");
	return n > 0 && (size_t)n < len ? n : -1;
}
