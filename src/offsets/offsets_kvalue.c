/* offsets_kvalue: see offsets_kvalue.h. */
#include "offsets/offsets_kvalue.h"

#include "util/jsonspan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The SQLite source's member in timestamp mode, written last. */
#define ROWID_SEEN_KEY "rowid_seen"
#define ROWID_SEEN ",\"" ROWID_SEEN_KEY "\":"

/* The JDBC value without skiff's last member rowid_seen into buf: its
 * length, or 0 when full has none (or buf is too small). */
static size_t jdbc_value(const char *full, size_t flen, char *buf, size_t len)
{
	const char *v = NULL;
	size_t vlen = 0, cut;
	int n;

	if (!jsonspan_member(full, flen, ROWID_SEEN_KEY, &v, &vlen) || flen < 2 ||
	    v + vlen != full + flen - 1 || (size_t)(v - full) < strlen(ROWID_SEEN))
		return 0;
	cut = (size_t)(v - full) - strlen(ROWID_SEEN);
	if (memcmp(full + cut, ROWID_SEEN, strlen(ROWID_SEEN)) != 0)
		return 0;
	n = snprintf(buf, len, "%.*s}", (int)cut, full);
	return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

/* offsets_kvalue.h */
size_t offsets_kvalue_connect(const char *full, char *buf, size_t len)
{
	size_t flen = strlen(full), plen = 0;
	const char *pos = NULL;
	int n;

	/* FileStreamSourceTask's one offset member; the JDBC values without
	 * skiff's rowid_seen; journald's have neither and are written as they
	 * are. */
	if (!jsonspan_member(full, flen, "position", &pos, &plen) || plen > 32)
		return jdbc_value(full, flen, buf, len);
	n = snprintf(buf, len, "{\"position\":%.*s}", (int)plen, pos);
	if (n <= 0 || (size_t)n >= len || ((size_t)n == flen && memcmp(buf, full, flen) == 0))
		return 0;
	return (size_t)n;
}

/* offsets_kvalue.h */
rd_kafka_resp_err_t offsets_kvalue_produce(rd_kafka_t *rk, const char *topic, const char *key,
                                           const char *value, rd_kafka_headers_t *h)
{
	char cv[OFFSETS_KVALUE_MAX];
	size_t cvlen = value != NULL ? offsets_kvalue_connect(value, cv, sizeof(cv)) : 0;
	const char *v = cvlen > 0 ? cv : value;
	size_t vlen = v != NULL ? strlen(v) : 0;
	rd_kafka_resp_err_t err;

	if (cvlen > 0)
		(void)rd_kafka_header_add(h, OFFSETS_KVALUE_HEADER, -1, value, -1);
	err =
	    rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
	                      RD_KAFKA_V_KEY(key, strlen(key)), RD_KAFKA_V_VALUE((void *)v, vlen),
	                      RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
	if (err != 0)
		rd_kafka_headers_destroy(h); /* the message's only once produced */
	return err;
}

/* offsets_kvalue.h */
char *offsets_kvalue_read(const rd_kafka_message_t *m)
{
	rd_kafka_headers_t *hdrs = NULL;
	const void *hv = NULL;
	size_t hlen = 0, n;
	char want[OFFSETS_KVALUE_MAX], *full = NULL;

	if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR &&
	    rd_kafka_header_get_last(hdrs, OFFSETS_KVALUE_HEADER, &hv, &hlen) ==
	        RD_KAFKA_RESP_ERR_NO_ERROR &&
	    hv != NULL && hlen > 0 && memchr(hv, '\0', hlen) == NULL)
		full = strndup(hv, hlen);
	if (full != NULL) {
		n = offsets_kvalue_connect(full, want, sizeof(want));
		if (n > 0 && n == m->len && memcmp(want, m->payload, n) == 0)
			return full;
	}
	/* No header (Connect's record), or one the value no longer matches
	 * (a Connect tool altered the value): the value alone. */
	free(full);
	return strndup(m->payload, m->len);
}
