/* config_section_bind: a table's rows bound to a settings struct's members
 * once, at load (src/config/config.c), and every table of skiff checked for
 * its binding (issue 27). */
#include "config/config.h"
#include "config/props.h"
#include "config/settings.h"
#include "core/log.h"
#include "testlib.h"

#include <stddef.h>
#include <string.h>

/* An enum of a key without default holds -1 when absent: it names it. */
enum colour { COLOUR_UNSET = -1, COLOUR_RED, COLOUR_GREEN, COLOUR_BLUE };

struct demo_conf {
	const char *topic, *cls, *absent;
	int64_t batch;
	bool strict;
	enum colour colour, shade;
	struct config_list hosts, none;
	bool batch_given, topic_given;
};

static const struct config_key demo_keys[] = {
    {"topic", CFG_STRING, "t", 0, 0, NULL, 0, "topic",
     CFG_FIELD_SET(struct demo_conf, topic, topic_given)},
    {"class", CFG_CLASS, "C", 0, 0, NULL, 0, "class", CFG_FIELD(struct demo_conf, cls)},
    {"absent", CFG_STRING, NULL, 0, 0, NULL, 0, "absent", CFG_FIELD(struct demo_conf, absent)},
    {"batch", CFG_INT, "10", 1, 1000, NULL, 0, "batch",
     CFG_FIELD_SET(struct demo_conf, batch, batch_given)},
    {"strict", CFG_BOOL, "false", 0, 0, NULL, 0, "strict", CFG_FIELD(struct demo_conf, strict)},
    {"colour", CFG_ENUM, "red", 0, 0, "red|green|blue", 0, "colour",
     CFG_FIELD(struct demo_conf, colour)},
    {"shade", CFG_ENUM, NULL, 0, 0, "red|green|blue", 0, "shade",
     CFG_FIELD(struct demo_conf, shade)},
    {"hosts", CFG_LIST, "a, b", 0, 0, NULL, 0, "hosts", CFG_FIELD(struct demo_conf, hosts)},
    {"none", CFG_LIST, NULL, 0, 0, NULL, 0, "none", CFG_FIELD(struct demo_conf, none)},
    {"old", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT, "inert", CFG_NOFIELD},
    CFG_END,
};

/* A section of demo_keys from text; NULL (and err) when it does not load. */
static struct config_section *load(const char *text, char *err, size_t errlen)
{
	const struct config_key *tables[] = {demo_keys};
	struct config_spec spec = {.prefix = "", .tables = tables, .ntables = 1};
	struct config_section *s = NULL;
	struct props *p = NULL;

	CHECK_INT(props_load_mem("d.properties", text, strlen(text), &p, err, errlen), 0);
	if (config_section_load(p, &spec, &s, err, errlen) != 0)
		s = NULL;
	props_destroy(p);
	return s;
}

static void test_defaults(void)
{
	char err[512];
	struct config_section *s = load("", err, sizeof(err));
	struct demo_conf c;

	CHECK(s != NULL);
	memset(&c, 0x55, sizeof(c));
	config_section_bind(s, demo_keys, &c);
	CHECK_STR(c.topic, "t");
	CHECK(!c.topic_given);
	CHECK_STR(c.cls, "C");
	CHECK(c.absent == NULL);
	CHECK_INT(c.batch, 10);
	CHECK(!c.batch_given);
	CHECK(!c.strict);
	CHECK_INT(c.colour, COLOUR_RED);
	CHECK_INT(c.shade, COLOUR_UNSET); /* no default, not given */
	CHECK_INT(c.hosts.n, 2);
	CHECK_STR(c.hosts.items[0], "a");
	CHECK_STR(c.hosts.items[1], "b");
	CHECK_INT(c.none.n, 0);
	CHECK(c.none.text == NULL);
	config_section_destroy(s);
}

static void test_given(void)
{
	char err[512];
	struct config_section *s = load("topic=x\nbatch=99\nstrict=TRUE\ncolour=blue\n"
	                                "shade=green\nhosts= h1 ,, h2,h3 \nnone=\n",
	                                err, sizeof(err));
	struct demo_conf c;

	CHECK(s != NULL);
	config_section_bind(s, demo_keys, &c);
	CHECK_STR(c.topic, "x");
	CHECK(c.topic_given);
	CHECK_INT(c.batch, 99);
	CHECK(c.batch_given);
	CHECK(c.strict);
	CHECK_INT(c.colour, COLOUR_BLUE);
	CHECK_INT(c.shade, COLOUR_GREEN);
	CHECK_INT(c.hosts.n, 3);
	CHECK_STR(c.hosts.items[2], "h3");
	CHECK_STR(c.hosts.text, "h1 ,, h2,h3");
	CHECK_INT(c.none.n, 0);
	CHECK_STR(c.none.text, "");
	config_section_destroy(s);
}

/* Validation stays the loader's: the errors name file:line as before. */
static void test_errors_unchanged(void)
{
	char err[512];

	CHECK(load("batch=0\n", err, sizeof(err)) == NULL);
	CHECK_STR(err, "d.properties:1: batch: 0 is out of range [1, 1000]");
	CHECK(load("\ncolour=pink\n", err, sizeof(err)) == NULL);
	CHECK_STR(err, "d.properties:2: colour: 'pink' is not one of red|green|blue");
	CHECK(load("bacth=1\n", err, sizeof(err)) == NULL);
	CHECK_STR(err, "d.properties:1: unknown property 'bacth' (skiff --help-config lists "
	               "them all)");
}

/* A struct kept by the section follows config_section_set. */
static void test_kept(void)
{
	char err[512];
	struct config_section *s = load("batch=5\n", err, sizeof(err));
	const struct demo_conf *c;

	CHECK(s != NULL);
	CHECK_INT(config_section_keep(s, demo_keys, sizeof(struct demo_conf)), 0);
	c = config_section_kept(s, demo_keys);
	CHECK(c != NULL);
	CHECK_INT(c->batch, 5);
	CHECK_INT(config_section_set(s, "colour", "green", "inline", err, sizeof(err)), 0);
	CHECK_INT(c->colour, COLOUR_GREEN);
	CHECK_INT(config_section_set(s, "colour", "grey", "inline", err, sizeof(err)), -1);
	CHECK_STR(err, "inline: colour: 'grey' is not one of red|green|blue");
	config_section_destroy(s);
}

struct two {
	int64_t a;
	bool b;
	const char *c;
};

static void test_table_check(void)
{
	static const struct config_key good[] = {
	    {"a", CFG_INT, "1", 0, 9, NULL, 0, "a", CFG_FIELD(struct two, a)},
	    {"c", CFG_STRING, NULL, 0, 0, NULL, 0, "c", CFG_FIELD_SET(struct two, c, b)},
	    {"i", CFG_STRING, NULL, 0, 0, NULL, CFG_INERT, "i", CFG_NOFIELD},
	    CFG_END,
	};
	static const struct config_key unbound[] = {
	    {"a", CFG_INT, "1", 0, 9, NULL, 0, "a", CFG_FIELD(struct two, a)},
	    {"c", CFG_STRING, NULL, 0, 0, NULL, 0, "c", CFG_NOFIELD},
	    CFG_END,
	};
	static const struct config_key shared[] = {
	    {"a", CFG_INT, "1", 0, 9, NULL, 0, "a", CFG_FIELD(struct two, a)},
	    {"a2", CFG_INT, "1", 0, 9, NULL, 0, "a2", CFG_FIELD(struct two, a)},
	    CFG_END,
	};
	static const struct config_key flag_shared[] = {
	    {"b", CFG_BOOL, "true", 0, 0, NULL, 0, "b", CFG_FIELD(struct two, b)},
	    {"c", CFG_STRING, NULL, 0, 0, NULL, 0, "c", CFG_FIELD_SET(struct two, c, b)},
	    CFG_END,
	};
	static const struct config_key mistyped[] = {
	    {"b", CFG_INT, "1", 0, 9, NULL, 0, "b", CFG_FIELD(struct two, b)},
	    CFG_END,
	};

	CHECK(config_table_check(good, sizeof(struct two)) == NULL);
	CHECK(config_table_check(demo_keys, sizeof(struct demo_conf)) == NULL);
	CHECK_STR(config_table_check(unbound, sizeof(struct two)), "c");
	CHECK_STR(config_table_check(shared, sizeof(struct two)), "a2");
	CHECK_STR(config_table_check(flag_shared, sizeof(struct two)), "c");
	CHECK_STR(config_table_check(mistyped, sizeof(struct two)), "b");
	CHECK_STR(config_table_check(good, sizeof(int64_t)), "c"); /* outside the struct */
}

/* log.level binds enum log_level: the table's choices in its order. */
static void test_log_level_order(void)
{
	static const char *const names[] = {"error", "warn", "notice", "info", "debug"};
	const struct config_key *table, *k;
	const char *name;
	size_t size;

	CHECK(settings_table(0, &name, &table, &size));
	for (k = table; k->name != NULL && strcmp(k->name, "log.level") != 0; k++)
		;
	CHECK(k->name != NULL);
	if (k->name == NULL)
		return;
	CHECK_STR(k->choices, "error|warn|notice|info|debug");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		enum log_level level;

		CHECK_INT(log_level_parse(names[i], &level), 0);
		CHECK_INT(level, i);
	}
}

/* Every row of every table has a member, and no two rows share one. */
static void test_every_table(void)
{
	const struct config_key *table;
	const char *name, *bad;
	size_t size, n = 0;

	for (size_t i = 0; settings_table(i, &name, &table, &size); i++, n++) {
		bad = size == 0 ? "(none: the table binds no struct)"
		                : config_table_check(table, size);
		if (bad != NULL)
			fprintf(stderr, "table %s: row %s\n", name, bad);
		CHECK(bad == NULL);
	}
	CHECK(n >= 6);
}

int main(void)
{
	test_defaults();
	test_given();
	test_errors_unchanged();
	test_kept();
	test_table_check();
	test_every_table();
	test_log_level_order();
	return testlib_done("test_config_bind");
}
