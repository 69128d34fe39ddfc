/* tailid and tailscan: rotated names, identity, birth order, globs, files
 * by inode, and the offset JSON of tailstream (tailpos). */
#include "sources/file/tailid.h"
#include "sources/file/tailscan.h"
#include "sources/file/tailstream.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void test_rotated_names(void)
{
	CHECK_INT(tailid_rotated_name("app.log", "app.log.1"), TAILID_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log.12"), TAILID_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log-20240131"), TAILID_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log.2024-01-31T10:00"), TAILID_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log_3"), TAILID_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log-2026120100.backup"), TAILID_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log.backup"), TAILID_NOT_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log.2.gz"), TAILID_COMPRESSED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log-20240131.zst"), TAILID_COMPRESSED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log"), TAILID_NOT_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log.old"), TAILID_NOT_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log.1.bak"), TAILID_NOT_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "app.logger.1"), TAILID_NOT_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "other.log.1"), TAILID_NOT_ROTATED);
	CHECK_INT(tailid_rotated_name("app.log", "app.log."), TAILID_NOT_ROTATED);
}

static void test_history(void)
{
	const char *pats[] = {"/var/log/app*"};
	const char *logs[] = {"/var/log/*.log"};

	CHECK(tailscan_is_history("/var/log/app.log.1", pats, 1));
	CHECK(tailscan_is_history("/var/log/app.log-20240101", pats, 1));
	CHECK(!tailscan_is_history("/var/log/app.log", pats, 1));
	CHECK(!tailscan_is_history("/var/log/app-2.log", logs, 1));
	CHECK(tailscan_is_history("/var/log/x.log.1", logs, 1)); /* history of x.log */
	CHECK(tailscan_is_history("/var/log/a.log.1", (const char *[]){"/var/log/a.log*"}, 1));
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

static void test_family_and_inode(void)
{
	const char *dir = testlib_tmpdir();
	char p[4][512], live[512];
	struct tailscan_entry *fam = NULL;
	struct tailid id;
	size_t n = 0;
	char *found;

	/* Created oldest first under names that sort the other way. */
	snprintf(p[0], sizeof(p[0]), "%s/app.log.3", dir);
	snprintf(p[1], sizeof(p[1]), "%s/app.log.2", dir);
	snprintf(p[2], sizeof(p[2]), "%s/app.log.1", dir);
	snprintf(p[3], sizeof(p[3]), "%s/app.log.4.gz", dir);
	snprintf(live, sizeof(live), "%s/app.log", dir);
	for (int i = 0; i < 4; i++) {
		testlib_write_file(p[i], "x\n", 2);
		sleep_ms(15);
	}
	testlib_write_file(live, "y\n", 2);
	CHECK_INT(tailscan_family(live, NULL, 0, &fam, &n), 0);
	CHECK_INT(n, 4);
	if (n == 4) {
		CHECK_STR(fam[0].path, p[0]);
		CHECK_STR(fam[1].path, p[1]);
		CHECK_STR(fam[2].path, p[2]);
		CHECK_INT(fam[3].kind, TAILID_COMPRESSED);
		CHECK(tailid_cmp_age(&fam[0].id, &fam[1].id) < 0);
	}
	tailscan_free(fam, n);
	CHECK_INT(tailid_of_path(p[1], &id), 0);
	found = tailscan_find_inode(dir, id.dev, id.ino);
	CHECK_STR(found, p[1]);
	free(found);
	CHECK(tailscan_find_inode(dir, id.dev, id.ino + 1000000) == NULL);
	for (int i = 0; i < 4; i++)
		unlink(p[i]);
	unlink(live);
	rmdir(dir);
}

static void test_tailpos(void)
{
	struct src_offset off = {.v = {5000, 2049, 9007199254740993LL, 77}};
	struct tailpos p;
	struct tailmark *m;
	char buf[256];

	CHECK(tailmark_new(1700000000123456789LL, &m) == 0);
	off.ref = &m->ref; /* the file's mark: its birth time */
	/* Past the first KiB, v[3] is the tail; fp comes from the mark once
	 * known. */
	CHECK(tailpos_format(&off, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "{\"position\":5000,\"dev\":2049,\"ino\":9007199254740993,"
	               "\"tail\":77,\"born\":1700000000123456789}");
	CHECK_INT(tailpos_parse(buf, &p), 0);
	CHECK(p.has_id && !p.has_fp && p.has_tail && p.tail == 77);
	m->fp = (uint64_t)-6437437392128475113LL;
	m->fp_full = true;
	CHECK(tailpos_format(&off, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "{\"position\":5000,\"dev\":2049,\"ino\":9007199254740993,"
	               "\"fp\":-6437437392128475113,\"fplen\":1024,\"tail\":77,"
	               "\"born\":1700000000123456789}");
	CHECK_INT(tailpos_parse(buf, &p), 0);
	CHECK(p.known && p.has_id && p.has_fp && p.has_born && p.has_tail);
	CHECK(p.ino == 9007199254740993LL && p.fp == (uint64_t)-6437437392128475113LL);
	CHECK_INT(p.fplen, 1024);
	/* Within the first KiB, v[3] is fp and no tail is written or taken. */
	off.v[0] = 900;
	CHECK(tailpos_format(&off, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"fp\":77,\"fplen\":900,") != NULL && strstr(buf, "tail") == NULL);
	CHECK_INT(tailpos_parse("{\"position\":900,\"tail\":5}", &p), 0);
	CHECK(!p.has_tail);
	off.v[0] = 5000;
	/* Let go at 5000: that offset says so, others do not. */
	m->done = 5000;
	CHECK(tailpos_format(&off, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"born\":1700000000123456789,\"finished\":1}") != NULL);
	CHECK_INT(tailpos_parse(buf, &p), 0);
	CHECK(p.finished && p.has_born && !p.has_after);
	off.v[0] = 4999;
	CHECK(tailpos_format(&off, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "finished") == NULL);
	/* A compressed file's floor: the birth of the file read before it. */
	m->after = 1699999999000000001LL;
	CHECK(tailpos_format(&off, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"born\":1700000000123456789,\"after\":1699999999000000001}") != NULL);
	CHECK_INT(tailpos_parse(buf, &p), 0);
	CHECK(p.has_after && p.after == 1699999999000000001LL && p.has_born);
	src_ref_drop(&m->ref);
	off.ref = NULL;
	off.v[0] = 10;
	CHECK(tailpos_format(&off, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"fplen\":10}") != NULL);
	CHECK_INT(tailpos_format(&off, buf, 20), -1);
	/* Connect's own offset: a position alone. */
	CHECK_INT(tailpos_parse("{\"position\":42}", &p), 0);
	CHECK(p.known && !p.has_id && !p.has_fp && p.pos == 42);
	CHECK_INT(tailpos_parse("{\"position\":-1}", &p), -1);
	CHECK_INT(tailpos_parse("{\"offset\":1}", &p), -1);
	/* fplen beyond the position is not trusted. */
	CHECK_INT(tailpos_parse("{\"position\":5,\"fp\":1,\"fplen\":9}", &p), 0);
	CHECK(!p.has_fp);
	/* A stop's "seen": the file's size then, never below the position. */
	CHECK_INT(tailpos_parse("{\"position\":5,\"fp\":1,\"fplen\":5,\"seen\":70}", &p), 0);
	CHECK(p.has_fp && p.fplen == 5 && p.has_seen && p.seen == 70 && !p.finished);
	CHECK_INT(tailpos_parse("{\"position\":5,\"seen\":4}", &p), 0);
	CHECK(!p.has_seen);
}

/* The tail's value is stored in offset files: pinned, so that a change of
 * its hash is a decision (every stored tail would then differ), and the same
 * on every board (words read little-endian). */
static void test_tail_value(void)
{
	char b[TAILPOS_TAIL];

	for (int i = 0; i < TAILPOS_TAIL; i++)
		b[i] = (char)('0' + i);
	CHECK(tailpos_tail(b, sizeof(b)) == UINT64_C(0x871c65953e2ff4e5));
	CHECK(tailpos_tail(b, 13) == UINT64_C(0x4c371cccc35b54dd)); /* a word and 5 bytes */
	CHECK(tailpos_tail(b, 0) == TAILID_FP_EMPTY);
}

int main(void)
{
	test_rotated_names();
	test_history();
	test_family_and_inode();
	test_tailpos();
	test_tail_value();
	return testlib_done("test_tailid");
}
