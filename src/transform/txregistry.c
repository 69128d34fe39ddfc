/* txregistry: the transforms and predicates skiff implements (txops.h). */
#include <stdio.h>
#include <string.h>

#include "transform/txops.h"

extern const struct tx_ops txinsert_field_ops, txheaders_insert_ops, txheaders_drop_ops,
    txheaders_from_ops, txfields_replace_ops, txfields_mask_ops, txshape_value_to_key_ops,
    txshape_extract_ops, txshape_hoist_ops, txshape_set_schema_ops, txroute_regex_ops,
    txroute_timestamp_ops, txfilter_ops, txfilter_topic_ops, txfilter_header_ops,
    txfilter_tombstone_ops, txcast_ops, txflatten_ops, txtimestamp_ops;

const struct tx_ops *const txregistry_transforms[] = {
    &txinsert_field_ops,
    &txheaders_insert_ops,
    &txfields_replace_ops,
    &txfields_mask_ops,
    &txshape_value_to_key_ops,
    &txshape_extract_ops,
    &txshape_hoist_ops,
    &txfilter_ops,
    &txroute_regex_ops,
    &txroute_timestamp_ops,
    &txheaders_drop_ops,
    &txheaders_from_ops,
    &txshape_set_schema_ops,
    &txcast_ops,
    &txflatten_ops,
    &txtimestamp_ops,
    NULL,
};

const struct tx_ops *const txregistry_predicates[] = {
    &txfilter_topic_ops,
    &txfilter_header_ops,
    &txfilter_tombstone_ops,
    NULL,
};

const struct tx_ops *txregistry_find(const struct tx_ops *const *list, const char *cls, bool *key)
{
	*key = false;
	for (size_t i = 0; list[i] != NULL; i++) {
		const struct tx_ops *o = list[i];
		size_t pl = strlen(o->pkg), nl = strlen(o->name);
		const char *rest;

		if (strncmp(cls, o->pkg, pl) != 0 || cls[pl] != '.' ||
		    strncmp(cls + pl + 1, o->name, nl) != 0)
			continue;
		rest = cls + pl + 1 + nl;
		if (!o->variants && *rest == '\0')
			return o;
		if (o->variants && (strcmp(rest, "$Key") == 0 || strcmp(rest, "$Value") == 0)) {
			*key = strcmp(rest, "$Key") == 0;
			return o;
		}
	}
	return NULL;
}
