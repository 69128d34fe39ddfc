/* help: --help-config's document as text (help.h). */
#include "cli/help.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

/* The string member name of o, or "" when it has none. */
static const char *str(const cJSON *o, const char *name)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));

	return s != NULL ? s : "";
}

static bool flag(const cJSON *o, const char *name)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, name));
}

/* Prints the strings of arr after lead, ", " between them, wrapped at 96
 * columns with continuation lines indented by indent. */
static void wrapped(const cJSON *arr, const char *lead, size_t indent, FILE *fp)
{
	size_t col = (size_t)fprintf(fp, "%s", lead);
	const char *sep = ", ";
	const cJSON *it;
	bool first = true;

	cJSON_ArrayForEach(it, arr)
	{
		const char *s = cJSON_GetStringValue(it);
		size_t need = strlen(s) + (first ? 0 : strlen(sep));

		if (!first && col + need > 96) {
			fprintf(fp, ",\n%*s%s", (int)indent, "", s);
			col = indent + strlen(s);
		} else {
			col += (size_t)fprintf(fp, "%s%s", first ? "" : sep, s);
		}
		first = false;
	}
	fputc('\n', fp);
}

static void print_key(const cJSON *k, FILE *fp)
{
	const cJSON *def = cJSON_GetObjectItemCaseSensitive(k, "default");
	const cJSON *choices = cJSON_GetObjectItemCaseSensitive(k, "choices"), *c;

	fprintf(fp, "  %s  (%s", str(k, "name"), str(k, "type"));
	if (flag(k, "required"))
		fprintf(fp, ", required");
	else if (cJSON_IsString(def))
		fprintf(fp, ", default \"%s\"", def->valuestring);
	if (cJSON_GetObjectItemCaseSensitive(k, "min") != NULL)
		fprintf(fp, ", %s..%s", str(k, "min"), str(k, "max"));
	if (choices != NULL) {
		const char *sep = ", one of ";

		cJSON_ArrayForEach(c, choices)
		{
			fprintf(fp, "%s%s", sep, cJSON_GetStringValue(c));
			sep = "|";
		}
	}
	if (flag(k, "secret"))
		fprintf(fp, ", secret");
	fprintf(fp, ")\n      %s\n", str(k, "doc"));
}

static void print_pattern(const cJSON *p, FILE *fp)
{
	const cJSON *defs = cJSON_GetObjectItemCaseSensitive(p, "defaults"), *d;

	fprintf(fp, "  %s\n      %s\n", str(p, "name"), str(p, "doc"));
	if (defs == NULL)
		return;
	fprintf(fp, "      skiff's defaults:");
	cJSON_ArrayForEach(d, defs) fprintf(fp, " %s=%s", d->string, cJSON_GetStringValue(d));
	fputc('\n', fp);
}

static void print_section(const cJSON *sec, FILE *fp)
{
	const cJSON *it, *classes = cJSON_GetObjectItemCaseSensitive(sec, "classes");
	const cJSON *ignored = cJSON_GetObjectItemCaseSensitive(sec, "ignored");

	fprintf(fp, "%s:\n", str(sec, "title"));
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sec, "keys")) print_key(it, fp);
	if (cJSON_GetArraySize(ignored) > 0) {
		fprintf(fp, "  accepted and ignored (a notice is logged):\n");
		wrapped(ignored, "      ", 6, fp);
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sec, "patterns"))
	    print_pattern(it, fp);
	if (cJSON_GetArraySize(classes) > 1) {
		fprintf(fp, "  connector.class is one of:\n");
		wrapped(classes, "      ", 6, fp);
	}
	fputc('\n', fp);
}

static void print_classes(const cJSON *list, FILE *fp)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, list)
	{
		fprintf(fp, "  %s%s\n      %s\n      properties: %s\n", str(it, "class"),
		        flag(it, "variants") ? "$Key|$Value" : "", str(it, "doc"),
		        str(it, "properties"));
	}
}

void help_print_text(const struct cJSON *doc, FILE *fp)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "sections"))
	    print_section(it, fp);
	fprintf(fp, "Transforms (connector keys, Connect's single message transforms):\n");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "chain_keys"))
	    print_pattern(it, fp);
	print_classes(cJSON_GetObjectItemCaseSensitive(doc, "transforms"), fp);
	fprintf(fp, "\nPredicates:\n");
	print_classes(cJSON_GetObjectItemCaseSensitive(doc, "predicates"), fp);
}
