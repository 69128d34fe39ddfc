/* offsets_doc: KIP-875 documents read as the CLI and REST PATCH read them;
 * what cannot be stored as meant is refused (issue 24, item 8). */
#include "offsets/offsets_doc.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

/* offsets_doc_entries of text: its code, *n, and errbuf in why. */
static int entries(const char *text, size_t *n, char *why, size_t wlen)
{
	cJSON *j = cJSON_Parse(text);
	struct offsets_doc_entry *e = NULL;
	int rc;

	*n = 0;
	rc = offsets_doc_entries(text, strlen(text), j, &e, n, why, wlen);
	free(e);
	cJSON_Delete(j);
	return rc;
}

int main(void)
{
	char why[512];
	size_t n;

	CHECK_INT(
	    entries("{\"offsets\":[{\"partition\":{\"filename\":\"/a\"},\"offset\":"
	            "{\"position\":1}},{\"partition\":{\"filename\":\"/b\"},\"offset\":null}]}",
	            &n, why, sizeof(why)),
	    0);
	CHECK(n == 2);
	/* A NUL escape in a name, and in an offset. */
	CHECK_INT(entries("{\"offsets\":[{\"partition\":{\"filename\":\"/a\\u0000x\"},\"offset\":"
	                  "{\"position\":1}}]}",
	                  &n, why, sizeof(why)),
	          OFFSETS_DOC_ERR_VALUE);
	CHECK(strstr(why, "\\u0000") != NULL);
	CHECK_INT(entries("{\"offsets\":[{\"partition\":{\"filename\":\"/a\"},\"offset\":"
	                  "{\"cursor\":\"c\\u0000\"}}]}",
	                  &n, why, sizeof(why)),
	          OFFSETS_DOC_ERR_VALUE);
	/* An escaped backslash followed by u0000 is six plain characters. */
	CHECK_INT(entries("{\"offsets\":[{\"partition\":{\"filename\":\"/a\\\\u0000\"},\"offset\":"
	                  "{\"position\":1}}]}",
	                  &n, why, sizeof(why)),
	          0);
	/* One partition twice (as Connect's map would merge them), whatever
	 * the offsets. */
	CHECK_INT(entries("{\"offsets\":[{\"partition\":{\"filename\":\"/a\"},\"offset\":"
	                  "{\"position\":1}},{\"partition\":{\"filename\":\"/b\"},\"offset\":null},"
	                  "{\"partition\":{\"filename\":\"/a\"},\"offset\":null}]}",
	                  &n, why, sizeof(why)),
	          OFFSETS_DOC_ERR_VALUE);
	CHECK(strstr(why, "twice") != NULL && strstr(why, "/a") != NULL);
	/* One partition twice, its members in another order: Connect's maps
	 * are equal. */
	CHECK_INT(entries("{\"offsets\":[{\"partition\":{\"protocol\":\"1\",\"table\":\"t\"},"
	                  "\"offset\":null},{\"partition\":{\"table\":\"t\",\"protocol\":\"1\"},"
	                  "\"offset\":null}]}",
	                  &n, why, sizeof(why)),
	          OFFSETS_DOC_ERR_VALUE);
	CHECK(strstr(why, "twice") != NULL);
	/* A member twice in an offset (skiff's reader takes the first, the
	 * GET's readers the last), in a partition, in a nested object. */
	CHECK_INT(entries("{\"offsets\":[{\"partition\":{\"filename\":\"/a\"},\"offset\":"
	                  "{\"position\":1,\"position\":2}}]}",
	                  &n, why, sizeof(why)),
	          OFFSETS_DOC_ERR_VALUE);
	CHECK(strstr(why, "\"position\" is named twice in an offset") != NULL);
	CHECK_INT(entries("{\"offsets\":[{\"partition\":{\"table\":\"a\",\"table\":\"b\"},"
	                  "\"offset\":null}]}",
	                  &n, why, sizeof(why)),
	          OFFSETS_DOC_ERR_VALUE);
	CHECK(strstr(why, "table") != NULL && strstr(why, "partition") != NULL);
	CHECK_INT(entries("{\"offsets\":[{\"partition\":{\"journal\":\"j\"},\"offset\":"
	                  "{\"cursor\":\"c\",\"seqnums\":{\"ab\":1,\"ab\":2}}}]}",
	                  &n, why, sizeof(why)),
	          OFFSETS_DOC_ERR_VALUE);
	/* The same name in two objects is no repeat. */
	CHECK_INT(entries("{\"offsets\":[{\"partition\":{\"journal\":\"j\"},\"offset\":"
	                  "{\"cursor\":\"c\",\"seqnums\":{\"cursor\":1}}}]}",
	                  &n, why, sizeof(why)),
	          0);
	CHECK_INT(
	    entries("{\"offsets\":[{\"partition\":{},\"offset\":null}]}", &n, why, sizeof(why)), 0);
	CHECK_INT(
	    entries("{\"offsets\":[{\"partition\":5,\"offset\":null}]}", &n, why, sizeof(why)),
	    OFFSETS_DOC_ERR_SHAPE);
	/* Keys: a partition's members in name order, as the sources write
	 * them. */
	{
		cJSON *p = cJSON_Parse("{\"table\":\"t\",\"protocol\":\"1\"}");
		char *key = offsets_doc_key("c", p);

		CHECK(key != NULL &&
		      strcmp(key, "[\"c\",{\"protocol\":\"1\",\"table\":\"t\"}]") == 0);
		free(key);
		cJSON_Delete(p);
		p = cJSON_Parse("{\"filename\":\"/a\"}");
		key = offsets_doc_key("c", p);
		CHECK(key != NULL && strcmp(key, "[\"c\",{\"filename\":\"/a\"}]") == 0);
		free(key);
		cJSON_Delete(p);
	}
	return testlib_done("test_offsets_doc");
}
