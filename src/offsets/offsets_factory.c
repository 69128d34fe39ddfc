/* offsets_factory: see offsets_factory.h. Chooses the backend from the
 * worker's settings; each backend opens itself (offsets_file.h,
 * offsets_kafka.h). */
#include "offsets/offsets_factory.h"

#include "config/config.h"
#include "config/settings.h"
#include "offsets/offsets_file.h"
#include "offsets/offsets_kafka.h"

static int open_store(const struct settings *s, bool hold, offsets_fence_fn fence, void *arg,
                      struct offsets **out, char *errbuf, size_t errlen)
{
	const char *file = settings_worker(s->worker)->offset_file;
	const char *topic = settings_worker(s->worker)->offset_topic;

	*out = NULL;
	if (topic == NULL || *topic == '\0')
		return (hold ? offsets_open_file_held : offsets_open_file)(file, out, errbuf,
		                                                           errlen);
	return offsets_open_kafka(s, hold, fence, arg, out, errbuf, errlen);
}

/* offsets_factory.h */
int offsets_open_store(const struct settings *s, bool hold, struct offsets **out, char *errbuf,
                       size_t errlen)
{
	return open_store(s, hold, NULL, NULL, out, errbuf, errlen);
}

/* offsets_factory.h */
int offsets_open_store_fenced(const struct settings *s, offsets_fence_fn fence, void *arg,
                              struct offsets **out, char *errbuf, size_t errlen)
{
	return open_store(s, true, fence, arg, out, errbuf, errlen);
}
