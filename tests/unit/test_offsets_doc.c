/* offsets_doc: KIP-875 documents read as the CLI and REST PATCH read them;
 * what cannot be stored as meant is refused (issue 24, item 8). */
#include "offsets_doc.h"
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
	CHECK_INT(
	    entries("{\"offsets\":[{\"partition\":{},\"offset\":null}]}", &n, why, sizeof(why)), 0);
	CHECK_INT(
	    entries("{\"offsets\":[{\"partition\":5,\"offset\":null}]}", &n, why, sizeof(why)),
	    OFFSETS_DOC_ERR_SHAPE);
	return testlib_done("test_offsets_doc");
}
