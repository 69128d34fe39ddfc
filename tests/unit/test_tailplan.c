/* tailplan: where a stream resumes, one table row per point of the
 * offset-safety argument at the top of tailplan.c - a stored place and what
 * was observed in, the plan out (rendered as text, so that a row reads as
 * the argument does). No file is touched. */
#include "sources/file/tailplan.h"
#include "testlib.h"

#include <stdio.h>
#include <string.h>

/* F, the file of the stored place: inode 10 born at 1000, 5000 bytes read. */
#define F_DEV 1
#define F_INO 10
#define F_BORN 1000
#define POS 5000

static const struct tailpos F = {.known = true,
                                 .pos = POS,
                                 .has_id = true,
                                 .dev = F_DEV,
                                 .ino = F_INO,
                                 .has_born = true,
                                 .born = F_BORN,
                                 .has_fp = true,
                                 .fp = 0xf00d,
                                 .fplen = 1024,
                                 .has_tail = true,
                                 .tail = 0x7a11};

static struct tailid id_of(int64_t ino, int64_t born)
{
	return (struct tailid){.dev = F_DEV, .ino = ino, .born = born, .has_btime = true};
}

/* A file observed: inode ino born at born, size bytes; ok: its first bytes
 * and tail are F's, and it opens at F's position when it is long enough. */
static struct tailobs seen(int64_t ino, int64_t born, int64_t size, bool ok)
{
	return (struct tailobs){.found = true,
	                        .has_id = true,
	                        .id = id_of(ino, born),
	                        .size = size,
	                        .fp_match = ok,
	                        .opens = size >= POS,
	                        .tail_match = ok};
}

static const char *const CASES[] = {"new", "wait", "at_path", "replaced", "moved"};
static const char *const FILES[] = {"path", "copy", "moved", "z"};
static const char *const LOSSES[] = {"",          "gone_at_stop",  "gone_held", "gone_unknown",
                                     "gone_idle", "gen_truncated", "gen_gone",  "undecodable"};
static const char *const EXTENDS[] = {"", "history", "replaced", "moved"};

/* The plan as one line: case, why, opens, loss, notes, how the chain goes on. */
static const char *render(const struct tailplan *pl)
{
	static char buf[512];
	size_t n = 0;

#define PUT(...) n += (size_t)snprintf(buf + n, sizeof(buf) - n, __VA_ARGS__)
	PUT("%s", CASES[pl->kind]);
	if (pl->why != NULL)
		PUT(" (%s)", pl->why);
	for (size_t i = 0; i < pl->nopen; i++)
		PUT(" open %s@%lld%s%s%s", FILES[pl->open[i].file], (long long)pl->open[i].pos,
		    pl->open[i].copy ? " copy" : "", pl->open[i].need_room ? " room" : "",
		    pl->open[i].expect ? " expect" : "");
	if (pl->finishing)
		PUT(" finishing");
	if (pl->loss != TAILPLAN_LOSS_NONE)
		PUT(" lost %s", LOSSES[pl->loss]);
	if (pl->lost_to > pl->lost_from)
		PUT(" [%lld,%lld)", (long long)pl->lost_from, (long long)pl->lost_to);
	if (pl->unreadable)
		PUT(" unreadable%s", pl->unreadable_undec ? " undec" : "");
	if (pl->copy_newer || pl->z_newer)
		PUT(" newer %s", pl->copy_newer ? "copy" : "z");
	if (pl->reused)
		PUT(" reused");
	if (pl->moved_born_later)
		PUT(" born-later");
	if (pl->fingerprint_resets > 0)
		PUT(" resets %d", pl->fingerprint_resets);
	if (pl->extend != TAILPLAN_EXTEND_NONE)
		PUT(" then %s", EXTENDS[pl->extend]);
	if (pl->has_after)
		PUT(" after %lld", (long long)pl->after.born);
	if (pl->has_floor)
		PUT(" floor %lld", (long long)pl->floor.born);
	if (pl->has_zfloor)
		PUT(" zfloor %lld", (long long)pl->zfloor.born);
	if (pl->from_end)
		PUT(" from-end");
	if (pl->anchor)
		PUT(" anchor");
#undef PUT
	return buf;
}

struct row {
	const char *point; /* the point of the argument */
	struct tailpos p;
	struct tailobs_set obs;
	unsigned flags;
	const char *plan;
};

static void run(const struct row *r)
{
	struct tailplan pl;
	const char *got;

	tailplan_resume(&r->p, &r->obs, r->flags, &pl);
	got = render(&pl);
	if (strcmp(got, r->plan) != 0)
		fprintf(stderr, "row: %s\n", r->point);
	CHECK_STR(got, r->plan);
}

/* F's place with changes. */
static struct tailpos place(int64_t seen_at_stop, bool finished)
{
	struct tailpos p = F;

	p.has_seen = seen_at_stop > 0;
	p.seen = seen_at_stop;
	p.finished = finished;
	return p;
}

/* Connect's FileStreamSourceTask offset: {"position":N} alone. */
static struct tailpos position_only(int64_t pos)
{
	return (struct tailpos){.known = true, .pos = pos};
}

static void test_the_argument(void)
{
	struct tailobs at_path = seen(F_INO, F_BORN, 8000, true);
	struct tailobs shorter = seen(F_INO, F_BORN, 100, true);
	struct tailobs other_bytes = seen(F_INO, F_BORN, 8000, false);
	struct tailobs rewritten = at_path;
	struct tailobs newer_here = seen(20, 3000, 300, false);
	struct tailobs reused_inode = seen(F_INO, 4000, 300, false);
	struct tailobs copy = seen(30, 2000, 6000, true);
	struct tailobs copy_newer = copy;
	struct tailobs z = seen(40, 2500, 7000, true);
	struct tailobs z_short = z;
	struct tailobs moved = seen(F_INO, F_BORN, 7000, true);
	struct tailobs moved_other = seen(F_INO, F_BORN, 7000, false);
	struct tailobs born_later = seen(F_INO, 4000, 7000, true);
	struct tailobs undec = {.found = true, .has_id = true, .id = id_of(50, 2600)};
	struct tailobs none = {0};
	struct tailobs small = seen(F_INO, 0, 8000, true);
	struct tailobs small_short = seen(F_INO, 0, 100, true);

	rewritten.tail_match = false;
	copy_newer.tail_match = false;
	z_short.opens = false;
	z_short.cut_short = true;
	small.has_id = small_short.has_id = false;

	const struct row rows[] = {
	    /* No place: the path's file from 0 (or its history first), the
	     * anchor stored where reading starts. */
	    {"new path", {0}, {.live = at_path}, 0, "new open path@0 room anchor"},
	    {"new path, rotated history first",
	     {0},
	     {.live = at_path},
	     TAILPLAN_HISTORY,
	     "new then history anchor"},
	    {"new path, read.from=end",
	     {0},
	     {.live = at_path},
	     TAILPLAN_HISTORY | TAILPLAN_FROM_END,
	     "new open path@0 room from-end anchor"},
	    /* F is still at the path: resume at p. */
	    {"F at the path", F, {.live = at_path}, 0, "at_path open path@5000 room"},
	    /* F at the path but shorter, or with other first bytes, or other
	     * bytes before p: the copy among the siblings with F's first bytes,
	     * from p; then the newer copies, then the path's file from 0. */
	    {"F shorter: its copy",
	     F,
	     {.live = shorter, .copy = copy, .held_seen = -1},
	     0,
	     "replaced (truncated) open copy@5000 copy finishing then replaced"},
	    {"F with other first bytes: its copy",
	     F,
	     {.live = other_bytes, .copy = copy, .held_seen = -1},
	     0,
	     "replaced (replaced) open copy@5000 copy finishing then replaced"},
	    {"F written past p again (a banner): its copy",
	     F,
	     {.live = rewritten, .copy = copy, .held_seen = -1},
	     0,
	     "replaced (truncated and written past its position again) open copy@5000 copy "
	     "finishing then replaced"},
	    {"F shorter: its copy compressed since",
	     F,
	     {.live = shorter, .z = z, .held_seen = -1},
	     0,
	     "replaced (truncated) open z@5000 copy expect finishing then replaced"},
	    {"F shorter: its copy compressed since, damaged before p",
	     F,
	     {.live = shorter, .z = z_short, .held_seen = -1},
	     0,
	     "replaced (truncated) open z@5000 copy expect unreadable then replaced after 1000"},
	    /* A copy with F's first bytes but not its tail was made after F's
	     * generation was replaced: F's generation is gone (counted with
	     * the bytes a stop saw), this copy is read whole. */
	    {"F shorter: only a newer copy, a stop saw F at 9000 bytes",
	     place(9000, false),
	     {.live = shorter, .copy = copy_newer, .held_seen = -1},
	     0,
	     "replaced (truncated) open copy@0 copy finishing lost gen_truncated [5000,9000) "
	     "newer copy then replaced"},
	    /* No copy: F's generation is counted gone, and the copytruncate
	     * copies newer than it are read oldest first (born after F), then
	     * the path's file from 0. */
	    {"F shorter, no copy: the newer copies oldest first",
	     F,
	     {.live = shorter, .held_seen = -1},
	     0,
	     "replaced (truncated) lost gen_gone then replaced after 1000"},
	    {"F shorter, no copy, the held set saw 6000 bytes",
	     F,
	     {.live = shorter, .held_seen = 6000},
	     0,
	     "replaced (truncated) lost gen_truncated [5000,6000) then replaced after 1000"},
	    /* The path names another file: F found by inode among the
	     * siblings, its birth and first bytes verified, read from p; then
	     * the siblings born after F, then the path's file. */
	    {"F rotated",
	     F,
	     {.live = newer_here, .moved = moved, .held_seen = -1},
	     0,
	     "moved open moved@5000 expect then moved after 1000 zfloor 1000"},
	    {"F's inode rotated, not F's bytes: F gone",
	     F,
	     {.live = newer_here, .moved = moved_other, .held_seen = -1},
	     0,
	     "moved lost gone_unknown resets 1 then moved after 1000 zfloor 1000"},
	    {"F's inode on a file born later: F gone",
	     F,
	     {.live = newer_here, .moved = born_later, .held_seen = -1},
	     0,
	     "moved lost gone_unknown born-later then moved after 1000 zfloor 1000"},
	    /* F compressed since (another inode), found by its first bytes,
	     * read from p; its floor is F, the uncompressed file it was. */
	    {"F compressed",
	     F,
	     {.live = newer_here, .z = z, .held_seen = -1},
	     0,
	     "moved open z@5000 copy expect then moved after 1000 floor 1000 zfloor 1000"},
	    {"F compressed, damaged before p: counted when opened",
	     F,
	     {.live = newer_here, .z = z_short, .held_seen = -1},
	     0,
	     "moved open z@5000 copy expect unreadable then moved after 1000 zfloor 1000"},
	    {"F compressed, not one byte decodes",
	     F,
	     {.live = newer_here, .undec = undec, .held_seen = -1},
	     0,
	     "moved lost undecodable unreadable undec then moved after 1000 zfloor 1000"},
	    /* F not found (deleted while stopped): counted, with the bytes a
	     * stop or the held set saw, and reading goes on with the siblings
	     * born after F. */
	    {"F gone, a stop saw 9000 bytes",
	     place(9000, false),
	     {.live = newer_here, .held_seen = -1},
	     0,
	     "moved lost gone_at_stop [5000,9000) then moved after 1000 zfloor 1000"},
	    {"F gone, the held set saw 7000 bytes",
	     F,
	     {.live = newer_here, .held_seen = 7000},
	     0,
	     "moved lost gone_held [5000,7000) then moved after 1000 zfloor 1000"},
	    {"F gone, its bytes unknown",
	     F,
	     {.live = none, .held_seen = -1},
	     0,
	     "moved lost gone_unknown then moved after 1000 zfloor 1000"},
	    /* F closed while idle (max.open.files) at p, every write to it
	     * heard since and none was: gone, it held nothing past its end
	     * then - beyond max.open.files, files read to their end and
	     * deleted were counted lost (1,744 of 2,000) - but for an
	     * unfinished last line before that end. */
	    {"F gone while closed idle at its end",
	     F,
	     {.live = none, .held_seen = -1, .idle_known = true, .idle_end = 5000},
	     0,
	     "moved then moved after 1000 zfloor 1000"},
	    {"F gone while closed idle, an unfinished line after p",
	     F,
	     {.live = none, .held_seen = -1, .idle_known = true, .idle_end = 5040},
	     0,
	     "moved lost gone_idle [5000,5040) then moved after 1000 zfloor 1000"},
	    /* skiff let go of F at p ("finished"): not looked for, nothing lost. */
	    {"F finished, gone",
	     place(0, true),
	     {.live = newer_here, .held_seen = -1},
	     0,
	     "moved then moved after 1000 zfloor 1000"},
	    {"F finished, nothing at the path yet", place(0, true), {.live = none}, 0, "wait"},
	    /* A newer file got F's inode (ext4): not F; F looked for among the
	     * siblings (not by that inode), counted when it is gone. */
	    {"inode reused: the newer file after F, F gone",
	     F,
	     {.live = reused_inode, .held_seen = -1},
	     0,
	     "moved lost gone_unknown reused resets 1 then moved after 1000 zfloor 1000"},
	    {"inode reused: F compressed since",
	     F,
	     {.live = reused_inode, .z = z, .held_seen = -1},
	     0,
	     "moved open z@5000 copy expect reused then moved after 1000 floor 1000 zfloor 1000"},
	    /* Connect's offset, a position alone: no identity, nothing orders
	     * the siblings: the path alone, as Connect would. */
	    {"Connect's position: the path",
	     position_only(POS),
	     {.live = small},
	     0,
	     "at_path open path@5000 room"},
	    {"Connect's position, the path shorter: the path from 0",
	     position_only(POS),
	     {.live = small_short, .held_seen = -1},
	     0,
	     "replaced (truncated) lost gen_gone then replaced"},
	    {"Connect's position, nothing at the path",
	     position_only(POS),
	     {.live = none, .held_seen = -1},
	     0,
	     "moved lost gone_unknown then moved"},
	    {"Connect's position 0, nothing at the path: nothing lost",
	     position_only(0),
	     {.live = none, .held_seen = -1},
	     0,
	     "moved then moved"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run(&rows[i]);
}

/* A compressed file whose first bytes are F's but not the bytes before p:
 * a newer file, not F (the banner every file starts with). */
static void test_newer_compressed(void)
{
	struct tailobs z = seen(40, 2500, 7000, true);
	struct row r = {"F shorter, a compressed file with F's banner only",
	                F,
	                {.live = seen(F_INO, F_BORN, 100, true), .held_seen = -1},
	                0,
	                "replaced (truncated) lost gen_gone newer z then replaced after 1000"};

	z.tail_match = false;
	r.obs.z = z;
	run(&r);
	r = (struct row){"F gone, a compressed file with F's banner only: undecodable looked at",
	                 F,
	                 {.live = seen(20, 3000, 300, false), .held_seen = -1},
	                 0,
	                 "moved lost gone_unknown newer z then moved after 1000 zfloor 1000"};
	r.obs.z = z;
	run(&r);
}

/* The place kept after a resume. */
static void test_saved(void)
{
	struct tailpos p = place(9000, false), saved = {0};

	CHECK(tailplan_saved(&p, true, &saved));
	CHECK(!saved.known); /* the chain holds the place */
	CHECK(saved.finished && saved.pos == POS && saved.ino == F_INO && !saved.has_fp);
	CHECK(!saved.has_seen);
	CHECK(tailplan_saved(&p, false, &saved));
	CHECK(saved.known && saved.finished);
	p.finished = true;
	saved = (struct tailpos){0};
	CHECK(!tailplan_saved(&p, false, &saved)); /* unchanged */
	CHECK(!saved.known);
}

/* The held files after F's: by the set's order, else by birth. */
static void test_held_after(void)
{
	struct tailheld_file f[3] = {{.dev = F_DEV, .ino = 9, .born = 500},
	                             {.dev = F_DEV, .ino = F_INO, .born = F_BORN},
	                             {.dev = F_DEV, .ino = 11, .born = 1500}};
	struct tailpos p = F;

	CHECK_INT(tailplan_held_after(f, 3, &p), 2);
	p.ino = 99; /* F not in the set: those born after it */
	CHECK_INT(tailplan_held_after(f, 3, &p), 2);
	p.born = 400;
	CHECK_INT(tailplan_held_after(f, 3, &p), 0);
	p.has_after = true; /* a compressed F: the order is not known */
	CHECK_INT(tailplan_held_after(f, 3, &p), 3);
	p = position_only(POS);
	CHECK_INT(tailplan_held_after(f, 3, &p), 3);
	f[2].fp = F.fp;
	f[2].fplen = F.fplen;
	p = F;
	CHECK(tailplan_held_is_place(&f[2], &p));
	CHECK(!tailplan_held_is_place(&f[1], &p));
}

int main(void)
{
	test_the_argument();
	test_newer_compressed();
	test_saved();
	test_held_after();
	return testlib_done("test_tailplan");
}
