/* Unit tests of tailmulti: Filebeat's pattern/negate/match over lines, the
 * offsets of records, the caps, the timeout, files never mixed. */
#include "sources/file/tailmulti.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A file's mark, counting its references. */
struct fmark {
	struct src_ref ref;
	int freed;
};

static void fmark_free(struct src_ref *r)
{
	((struct fmark *)r)->freed++;
}

/* Lines of one file as the reader hands them out: each with its start and
 * the offset after its "\n". */
struct ffile {
	struct fmark mark;
	int64_t ino, pos;
	struct tailline lines[64];
	size_t n;
};

static void ffile_init(struct ffile *f, int64_t ino)
{
	memset(f, 0, sizeof(*f));
	src_ref_init(&f->mark.ref, fmark_free);
	f->ino = ino;
}

/* Appends the '|'-separated lines of text (string literal storage). */
static void ffile_lines(struct ffile *f, const char *text)
{
	f->n = 0;
	for (const char *p = text; *p != '\0' && f->n < 64;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		struct tailline *l = &f->lines[f->n++];

		l->bytes = p;
		l->len = len;
		l->start = f->pos;
		f->pos += (int64_t)len + 1;
		l->after = (struct src_offset){.v = {f->pos, 8, f->ino, 0}, .ref = &f->mark.ref};
		p += len + (bar ? 1 : 0);
	}
}

struct run {
	struct tailmulti_rules *r;
	struct tailmulti *m;
	struct tailbuf buf;
	struct tailline out[80];
	size_t nout;
	struct tailmulti_stats st;
	char mem[1 << 16];
};

static void run_init(struct run *u, const char *pattern, bool negate, bool before, size_t max_lines,
                     size_t max_bytes)
{
	struct tailmulti_opts o = {.pattern = pattern,
	                           .negate = negate,
	                           .before = before,
	                           .max_lines = max_lines,
	                           .max_bytes = max_bytes,
	                           .timeout_ms = 1000};
	char err[256];

	memset(u, 0, sizeof(*u));
	u->buf = (struct tailbuf){.mem = u->mem, .cap = sizeof(u->mem)};
	CHECK_INT(tailmulti_rules_new(&o, &u->r, err, sizeof(err)), 0);
	CHECK_INT(tailmulti_new(u->r, &u->m), 0);
}

static void feed(struct run *u, const struct ffile *f, int64_t now)
{
	u->buf.used = 0;
	CHECK_INT(tailmulti_feed(u->m, f ? f->lines : NULL, f ? f->n : 0, now, &u->buf, u->out,
	                         &u->nout, &u->st),
	          0);
}

static void check_rec(const struct run *u, size_t i, const char *want, int64_t start, int64_t after)
{
	char got[4096];

	CHECK(i < u->nout);
	if (i >= u->nout)
		return;
	snprintf(got, sizeof(got), "%.*s", (int)u->out[i].len, u->out[i].bytes);
	CHECK_STR(got, want);
	CHECK_INT(u->out[i].start, start);
	CHECK_INT(u->out[i].after.v[0], after);
}

static void run_fini(struct run *u)
{
	tailmulti_free(u->m);
	tailmulti_rules_free(u->r);
}

/* negate=false, match=after: indented lines and "Caused by:" continue. */
static void test_java(void)
{
	struct run u;
	struct ffile f;

	ffile_init(&f, 1);
	run_init(&u, "^[[:space:]]|^Caused by:", false, false, 500, 4096);
	ffile_lines(&f, "E boom|\tat a.B(B.java:1)|\tat c.D(D.java:2)|Caused by: x|\t... 2 more|"
	                "I next|\tat e.F(F.java:3)");
	feed(&u, &f, 0);
	CHECK_INT(u.nout, 1);
	check_rec(&u, 0,
	          "E boom\n\tat a.B(B.java:1)\n\tat c.D(D.java:2)\nCaused by: x\n\t... 2 more", 0,
	          68);
	CHECK_INT(tailmulti_deadline(u.m), 1000);
	/* The continuation in the next poll joins the waiting record. */
	ffile_lines(&f, "\tat g.H(H.java:4)|");
	feed(&u, &f, 500);
	CHECK_INT(u.nout, 0);
	feed(&u, NULL, 1499);
	CHECK_INT(u.nout, 0);
	feed(&u, NULL, 1500);
	CHECK_INT(u.nout, 1);
	check_rec(&u, 0, "I next\n\tat e.F(F.java:3)\n\tat g.H(H.java:4)", 68, 111);
	CHECK_INT(u.st.timeouts, 1);
	CHECK_INT(tailmulti_deadline(u.m), -1);
	/* A continuation with nothing before it starts a record (as after a
	 * restart at a committed cut). */
	ffile_lines(&f, "\tat i.J(J.java:5)|X");
	feed(&u, &f, 2000);
	CHECK_INT(u.nout, 1);
	check_rec(&u, 0, "\tat i.J(J.java:5)", 111, 129);
	run_fini(&u);
	src_ref_drop(&f.mark.ref);
	CHECK_INT(f.mark.freed, 1); /* every reference given back */
}

/* negate=true, match=after: a timestamp starts a record. */
static void test_timestamp(void)
{
	struct run u;
	struct ffile f;

	ffile_init(&f, 1);
	run_init(&u, "^[0-9]{4}-[0-9]{2}-[0-9]{2} ", true, false, 500, 4096);
	ffile_lines(&f, "2024-01-02 a|  more a|no indent a|2024-01-02 b|2024-01-02 c|c2");
	feed(&u, &f, 0);
	CHECK_INT(u.nout, 2);
	check_rec(&u, 0, "2024-01-02 a\n  more a\nno indent a", 0, 34);
	check_rec(&u, 1, "2024-01-02 b", 34, 47);
	feed(&u, NULL, 1000);
	check_rec(&u, 0, "2024-01-02 c\nc2", 47, 63);
	run_fini(&u);
	src_ref_drop(&f.mark.ref);
	CHECK_INT(f.mark.freed, 1); /* every reference given back */
}

/* Wrapped JSON, both ways: a record starts at "{" (negate, after), or a
 * line not ending in "}" is continued by the next (negate, before). */
static void test_json(void)
{
	struct run u;
	struct ffile f;
	const char *text = "{\"a\":1,|  \"b\":[1,|2]}|{\"c\":3}|{\"d\":|4}";

	ffile_init(&f, 1);
	run_init(&u, "^\\{", true, false, 500, 4096);
	ffile_lines(&f, text);
	feed(&u, &f, 0);
	CHECK_INT(u.nout, 2);
	check_rec(&u, 0, "{\"a\":1,\n  \"b\":[1,\n2]}", 0, 22);
	check_rec(&u, 1, "{\"c\":3}", 22, 30);
	run_fini(&u);

	ffile_init(&f, 1);
	run_init(&u, "\\}$", true, true, 500, 4096);
	ffile_lines(&f, text);
	feed(&u, &f, 0);
	CHECK_INT(u.nout, 3); /* match=before: complete at its last line */
	check_rec(&u, 2, "{\"d\":\n4}", 30, 39);
	CHECK_INT(tailmulti_deadline(u.m), -1);
	run_fini(&u);
	src_ref_drop(&f.mark.ref);
	CHECK_INT(f.mark.freed, 1); /* every reference given back */
}

/* The caps cut a record and count it; nothing is dropped or stalls. */
static void test_caps(void)
{
	struct run u;
	struct ffile f;

	ffile_init(&f, 1);
	run_init(&u, "^ ", false, false, 3, 4096);
	ffile_lines(&f, "a| 1| 2| 3| 4| 5| 6|b");
	feed(&u, &f, 0);
	CHECK_INT(u.nout, 3);
	check_rec(&u, 0, "a\n 1\n 2", 0, 8);
	check_rec(&u, 1, " 3\n 4\n 5", 8, 17);
	check_rec(&u, 2, " 6", 17, 20);
	CHECK_INT(u.st.max_lines, 2);
	run_fini(&u);

	ffile_init(&f, 1);
	run_init(&u, "^ ", false, false, 500, 10);
	ffile_lines(&f, "abcd| efgh| ij|k");
	feed(&u, &f, 0);
	CHECK_INT(u.nout, 2);
	check_rec(&u, 0, "abcd\n efgh", 0, 11); /* exactly 10 bytes */
	check_rec(&u, 1, " ij", 11, 15);
	CHECK_INT(u.st.max_bytes, 1);
	run_fini(&u);
	src_ref_drop(&f.mark.ref);
	CHECK_INT(f.mark.freed, 1); /* every reference given back */
}

/* A record never spans two files, nor a truncation of one. */
static void test_files(void)
{
	struct run u;
	struct ffile a, b;

	ffile_init(&a, 1);
	ffile_init(&b, 2);
	run_init(&u, "^ ", false, false, 500, 4096);
	ffile_lines(&a, "a| a1");
	ffile_lines(&b, " b0| b1|c");
	feed(&u, &a, 0);
	CHECK_INT(u.nout, 0);
	feed(&u, &b, 10);
	CHECK_INT(u.nout, 2);
	check_rec(&u, 0, "a\n a1", 0, 6);
	CHECK(u.out[0].after.ref == &a.mark.ref);
	check_rec(&u, 1, " b0\n b1", 0, 8);
	CHECK(u.out[1].after.ref == &b.mark.ref);
	CHECK_INT(a.mark.ref.refs, 2); /* the file's, and the record's until the next feed */
	/* b truncated and written again from 0. */
	b.pos = 0;
	ffile_lines(&b, " z");
	feed(&u, &b, 20);
	CHECK_INT(a.mark.ref.refs, 1);
	check_rec(&u, 0, "c", 8, 10);
	run_fini(&u);
	CHECK_INT(a.mark.freed, 0);
	src_ref_drop(&a.mark.ref);
	src_ref_drop(&b.mark.ref);
	CHECK_INT(a.mark.freed, 1);
	CHECK_INT(b.mark.freed, 1);
}

static void test_bad_pattern(void)
{
	struct tailmulti_opts o = {
	    .pattern = "([a-z", .max_lines = 1, .max_bytes = 16, .timeout_ms = 1};
	struct tailmulti_rules *r = (struct tailmulti_rules *)1;
	char err[256] = "";

	CHECK_INT(tailmulti_rules_new(&o, &r, err, sizeof(err)), TAILMULTI_ERR);
	CHECK(r == NULL);
	CHECK(strncmp(err, "multiline.pattern: ", 19) == 0 && strlen(err) > 19);
}

int main(void)
{
	test_java();
	test_timestamp();
	test_json();
	test_caps();
	test_files();
	test_bad_pattern();
	return testlib_done("tailmulti");
}
