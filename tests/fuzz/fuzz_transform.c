/* fuzz_transform: libFuzzer target for the transform configuration
 * (src/transform/, through the config table's pass-through and
 * transform_chain_parse, as a connector file reaches it).
 *
 * The input is a connector file's text. Beyond "no crash, no leak, no
 * undefined behaviour": a chain that does not load says why; one that loads
 * prints (--check's form) and is applied to a line and to a row, whose
 * results the converters must take, or it says why it failed. */
#include "config/config.h"
#include "convert/convert.h"
#include "config/props.h"
#include "core/source.h"
#include "transform/transform.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char row_env[] =
    "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"optional\":false,"
    "\"field\":\"id\"},{\"type\":\"string\",\"optional\":true,\"field\":\"msg\"},"
    "{\"type\":\"double\",\"optional\":true,\"field\":\"t\"}],\"optional\":false,"
    "\"name\":\"row\"},\"payload\":{\"id\":42,\"msg\":null,\"t\":1.5}}";

static void apply(struct transform_chain *c, const struct record *r)
{
	struct converter conv[] = {{CONV_JSON, true}, {CONV_JSON, false}, {CONV_STRING, false}};
	struct transform_out t;
	char err[1024] = "";
	enum transform_result res = transform_chain_apply(c, r, &t, err, sizeof(err));

	if (res == TRANSFORM_ERROR && err[0] == '\0')
		abort(); /* failed without a reason */
	if (res != TRANSFORM_OK)
		return;
	if (t.topic == NULL || (t.nheaders > 0 && t.headers == NULL))
		abort();
	for (size_t i = 0; i < sizeof(conv) / sizeof(conv[0]); i++) {
		char *out = NULL;
		size_t len = 0;
		uint64_t rep = 0;

		convert_value(&conv[i], &t.key, &out, &len, &rep);
		free(out);
		out = NULL;
		convert_value(&conv[i], &t.value, &out, &len, &rep);
		free(out);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct config_key none[] = {CFG_END};
	const struct config_key *tables[] = {none};
	struct config_spec spec = {
	    .prefix = "", .tables = tables, .ntables = 1, .passthrough = transform_config_prefixes};
	struct props *p = NULL;
	struct config_section *s = NULL;
	struct transform_chain *c = NULL;
	char err[2048] = "";
	cJSON *env = cJSON_Parse(row_env);
	struct record line = {.topic = "skiff-test", .timestamp_ms = 1700000000123};
	struct record row = {.topic = "skiff-test"};
	FILE *devnull = fopen("/dev/null", "w");

	if (env == NULL || devnull == NULL)
		abort();
	line.value = (struct record_value){.kind = VALUE_STRING, .bytes = "a\0line", .len = 6};
	row.value = (struct record_value){VALUE_STRUCT,
	                                  NULL,
	                                  0,
	                                  cJSON_GetObjectItem(env, "payload"),
	                                  cJSON_GetObjectItem(env, "schema"),
	                                  NULL};
	if (props_load_mem("c.properties", (const char *)data, size, &p, err, sizeof(err)) == 0 &&
	    config_section_load(p, &spec, &s, err, sizeof(err)) == 0) {
		if (transform_chain_parse(s, &c, err, sizeof(err)) != 0) {
			if (err[0] == '\0')
				abort(); /* refused without a reason */
		} else {
			transform_chain_print(c, "  ", devnull);
			apply(c, &line);
			apply(c, &row);
			apply(c, &line); /* the chain's memory is reused */
		}
	}
	transform_chain_destroy(c);
	config_section_destroy(s);
	props_destroy(p);
	cJSON_Delete(env);
	fclose(devnull);
	return 0;
}
