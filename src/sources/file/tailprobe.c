/* tailprobe: the observing half of a resume (tailprobe.h). */
#include "sources/file/tailprobe.h"

#include "sources/file/tailscan.h"

#include <stdint.h>
#include <stdlib.h>

void tailprobe_live(const struct tailprobe_where *w, const struct tailpos *p, struct tailprobe *out)
{
	struct tailobs *o = &out->obs.live;
	struct tailfile *tf = NULL;

	*o = (struct tailobs){0};
	if (tailfile_open(w->guard, w->path, 1, 0, &tf, NULL, 0) != 0) {
		tailfile_close(tf);
		return;
	}
	o->found = o->has_id = o->opens = true;
	o->id = *tailfile_id(tf);
	o->size = tailfile_size(tf);
	o->fp_match = !p->has_fp || tailfile_matches(tf, p->fp, p->fplen);
	o->tail_match =
	    !p->has_tail || (o->size >= p->pos && tailfile_tail_at(tf, p->pos, p->tail));
	tailfile_close(tf);
}

/* Opens path as the reader would and checks it at p's position: o->opens,
 * cut_short, size, fp_match, tail_match. expect: the file a search found
 * (NULL: any), matched by dev and inode. Returns false when path names
 * another file than expect, or nothing, by now (renamed: search again). */
static bool check_at(const struct tailprobe_where *w, const char *path, const struct tailpos *p,
                     const struct tailid *expect, struct tailobs *o)
{
	struct tailfile *tf = NULL;
	int rc = tailfile_open(w->guard, path, w->max_line, w->policy, &tf, NULL, 0);

	if (expect != NULL &&
	    (rc == TAILFILE_ERR_NOENT || (rc == 0 && !tailid_same(tailfile_id(tf), expect)))) {
		tailfile_close(tf);
		return false;
	}
	if (rc == 0) {
		o->size = tailfile_size(tf);
		o->fp_match = !p->has_fp || tailfile_matches(tf, p->fp, p->fplen);
		if (tailfile_start(tf, p->pos) == 0) {
			o->opens = true;
			o->tail_match = !p->has_tail || tailfile_v3(tf) == (int64_t)p->tail;
		} else if (tailfile_compressed(tf)) {
			o->cut_short = true; /* found by its first bytes: damaged before p */
		}
	}
	tailfile_close(tf);
	return true;
}

/* p's copy by its first bytes (copytruncate). */
static void probe_copy(const struct tailprobe_where *w, const struct tailpos *p,
                       struct tailprobe *out)
{
	struct tailobs *o = &out->obs.copy;
	int64_t csize = 0;

	out->copy = tailscan_find_copy(w->path, w->dirs, w->ndirs, p->fp, p->fplen, p->pos, NULL, 0,
	                               INT64_MIN, &csize);
	if (out->copy == NULL)
		return;
	o->found = true;
	o->has_id = tailid_of_path(out->copy, &o->id) == 0;
	check_at(w, out->copy, p, NULL, o);
}

/* p's file compressed since (born at or after p's), searched again when a
 * rotation renamed it between the search and the open. */
static void probe_z(const struct tailprobe_where *w, const struct tailpos *p, struct tailprobe *out)
{
	struct tailobs *o = &out->obs.z;
	int64_t born = p->has_born ? p->born : INT64_MIN;

	for (int tries = 0; tries < TAILSCAN_RELIST_TRIES; tries++) {
		free(out->z);
		*o = (struct tailobs){0};
		out->z = tailscan_find_compressed(w->path, w->dirs, w->ndirs, p->fp, p->fplen, born,
		                                  &o->id);
		if (out->z == NULL)
			return;
		o->found = o->has_id = true;
		if (check_at(w, out->z, p, &o->id, o))
			return;
	}
	free(out->z); /* renamed under every search: not found */
	out->z = NULL;
	*o = (struct tailobs){0};
}

/* The sibling with p's inode, searched again once when renamed before its
 * open. */
static void probe_moved(const struct tailprobe_where *w, const struct tailpos *p,
                        struct tailprobe *out)
{
	struct tailobs *o = &out->obs.moved;
	struct tailid want = {.dev = p->dev, .ino = p->ino};

	for (int tries = 0; tries < 2; tries++) {
		free(out->moved);
		*o = (struct tailobs){0};
		out->moved = tailscan_find_moved(w->path, w->dirs, w->ndirs, p->dev, p->ino);
		if (out->moved == NULL)
			return;
		o->found = true;
		o->has_id = tailid_of_path(out->moved, &o->id) == 0;
		if (!o->has_id || !tailplan_same_file(&o->id, p) ||
		    check_at(w, out->moved, p, &want, o))
			return;
	}
	free(out->moved); /* renamed again meanwhile */
	out->moved = NULL;
	*o = (struct tailobs){0};
}

void tailprobe_family(const struct tailprobe_where *w, const struct tailpos *p,
                      enum tailplan_case kind, struct tailprobe *out)
{
	struct tailobs_set *obs = &out->obs;

	if (kind == TAILPLAN_REPLACED && p->has_fp) {
		probe_copy(w, p, out);
		if (!obs->copy.found)
			probe_z(w, p, out);
	}
	if (kind != TAILPLAN_MOVED)
		return;
	/* A finished place without first bytes only orders what follows. */
	if (p->has_id && (!p->finished || p->has_fp))
		probe_moved(w, p, out);
	if (!p->has_fp ||
	    (obs->moved.found && obs->moved.has_id && tailplan_same_file(&obs->moved.id, p)))
		return; /* p's file is there: read, or not p's bytes */
	probe_z(w, p, out);
	if (p->finished ||
	    (obs->z.found && (obs->z.cut_short || !obs->z.opens || obs->z.tail_match)))
		return;
	out->undec = tailscan_find_undecodable(w->path, w->dirs, w->ndirs,
	                                       p->has_born ? p->born : INT64_MIN, &obs->undec.id);
	obs->undec.found = obs->undec.has_id = out->undec != NULL;
}

void tailprobe_free(struct tailprobe *pr)
{
	free(pr->copy);
	free(pr->moved);
	free(pr->z);
	free(pr->undec);
	pr->copy = pr->moved = pr->z = pr->undec = NULL;
}
