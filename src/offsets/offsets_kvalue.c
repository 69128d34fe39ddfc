/* offsets_kvalue: see offsets_kvalue.h. */
#include "offsets/offsets_kvalue.h"

#include "util/jsonspan.h"

#include <inttypes.h>
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
void offsets_kvalue_encode(struct offsets_krecord *r, const char *value, uint64_t gen,
                           const char *device, const char *store)
{
	size_t cvlen =
	    value != NULL ? offsets_kvalue_connect(value, r->connect, sizeof(r->connect)) : 0;
	size_t n = 0;

	r->value = cvlen > 0 ? r->connect : value;
	r->vlen = cvlen > 0 ? cvlen : value != NULL ? strlen(value) : 0;
	r->headers[n++] = (struct record_header){
	    .name = OFFSETS_KVALUE_GEN_HEADER,
	    .value = r->gen,
	    .len = (size_t)snprintf(r->gen, sizeof(r->gen), "%" PRIu64, gen)};
	r->headers[n++] = (struct record_header){
	    .name = OFFSETS_KVALUE_DEVICE_HEADER, .value = device, .len = strlen(device)};
	if (store != NULL)
		r->headers[n++] = (struct record_header){
		    .name = OFFSETS_KVALUE_STORE_HEADER, .value = store, .len = strlen(store)};
	if (cvlen > 0)
		r->headers[n++] = (struct record_header){
		    .name = OFFSETS_KVALUE_HEADER, .value = value, .len = strlen(value)};
	r->nheaders = n;
}

/* The last header name of h as a string in buf (len bytes), or NULL when
 * there is none, or it is empty or does not fit. */
static const char *header(const struct record_header *h, size_t nh, const char *name, char *buf,
                          size_t len)
{
	for (size_t i = nh; i-- > 0;) {
		if (strcmp(h[i].name, name) != 0)
			continue;
		if (h[i].value == NULL || h[i].len == 0 || h[i].len >= len)
			return NULL;
		memcpy(buf, h[i].value, h[i].len);
		buf[h[i].len] = '\0';
		return buf;
	}
	return NULL;
}

/* offsets_kvalue.h */
void offsets_kvalue_meta(const struct record_header *h, size_t nh, struct offsets_kmeta *out)
{
	char gen[24];
	const char *g = header(h, nh, OFFSETS_KVALUE_GEN_HEADER, gen, sizeof(gen));

	out->skiff = g != NULL;
	out->gen = g != NULL ? strtoull(g, NULL, 10) : 0;
	out->device = header(h, nh, OFFSETS_KVALUE_DEVICE_HEADER, out->devbuf, sizeof(out->devbuf));
	out->store =
	    header(h, nh, OFFSETS_KVALUE_STORE_HEADER, out->storebuf, sizeof(out->storebuf));
}

/* offsets_kvalue.h */
rd_kafka_resp_err_t offsets_kvalue_produce(rd_kafka_t *rk, const char *topic, const char *key,
                                           const struct offsets_krecord *r)
{
	rd_kafka_headers_t *h = rd_kafka_headers_new(r->nheaders);
	rd_kafka_resp_err_t err;

	for (size_t i = 0; i < r->nheaders; i++)
		(void)rd_kafka_header_add(h, r->headers[i].name, -1, r->headers[i].value,
		                          (ssize_t)r->headers[i].len);
	err = rd_kafka_producev(
	    rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
	    RD_KAFKA_V_KEY(key, strlen(key)), RD_KAFKA_V_VALUE((void *)r->value, r->vlen),
	    RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
	if (err != 0)
		rd_kafka_headers_destroy(h); /* the message's only once produced */
	return err;
}

/* offsets_kvalue.h */
size_t offsets_kvalue_headers_of(const rd_kafka_message_t *m,
                                 struct record_header h[OFFSETS_KVALUE_HEADERS])
{
	static const char *const names[OFFSETS_KVALUE_HEADERS] = {
	    OFFSETS_KVALUE_GEN_HEADER, OFFSETS_KVALUE_DEVICE_HEADER, OFFSETS_KVALUE_STORE_HEADER,
	    OFFSETS_KVALUE_HEADER};
	rd_kafka_headers_t *hdrs = NULL;
	size_t n = 0;

	if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR)
		return 0;
	for (size_t i = 0; i < OFFSETS_KVALUE_HEADERS; i++) {
		const void *v = NULL;
		size_t len = 0;

		if (rd_kafka_header_get_last(hdrs, names[i], &v, &len) ==
		    RD_KAFKA_RESP_ERR_NO_ERROR)
			h[n++] = (struct record_header){.name = names[i], .value = v, .len = len};
	}
	return n;
}

/* offsets_kvalue.h */
char *offsets_kvalue_value(const void *payload, size_t len, const struct record_header *h,
                           size_t nh)
{
	const struct record_header *last = NULL;
	char want[OFFSETS_KVALUE_MAX], *full = NULL;
	size_t n;

	for (size_t i = 0; i < nh; i++)
		if (strcmp(h[i].name, OFFSETS_KVALUE_HEADER) == 0)
			last = &h[i];
	if (last != NULL && last->value != NULL && last->len > 0 &&
	    memchr(last->value, '\0', last->len) == NULL)
		full = strndup(last->value, last->len);
	if (full != NULL) {
		n = offsets_kvalue_connect(full, want, sizeof(want));
		if (n > 0 && n == len && memcmp(want, payload, n) == 0)
			return full;
	}
	/* No header (Connect's record), or one the value no longer matches
	 * (a Connect tool altered the value): the value alone. */
	free(full);
	return strndup(payload, len);
}
