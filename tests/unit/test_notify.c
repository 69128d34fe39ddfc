/* notify's STATUS= line, from a faked pipeline (queryfake.c): connectors
 * running and failed, records acked and failed, whether Kafka acknowledges
 * what is in flight, a failing offset flush. */
#include "control/notify.h"
#include "core/loop.h"
#include "core/query.h"
#include "queryfake.h"
#include "testlib.h"

#include <stdlib.h>

static void idle_and_failed(void)
{
	struct queryfake f;
	char buf[384];
	size_t a, b;

	queryfake_init(&f, NULL);
	a = queryfake_conn(&f, "a");
	b = queryfake_conn(&f, "b");
	f.conns[a].acked = 7;
	f.conns[b].acked = 5;
	f.conns[b].failed = 2;
	f.conns[b].state = QUERY_FAILED;
	notify_summary(&f.q, buf, sizeof(buf));
	CHECK_STR(buf, "1 connector running, 1 failed; 12 records acked, 2 failed; "
	               "Kafka idle, 0 in flight");
}

static void kafka_silent(void)
{
	struct queryfake f;
	char buf[384];

	queryfake_init(&f, NULL);
	queryfake_conn(&f, "a");
	queryfake_conn(&f, "b");
	f.producer.in_flight = 3;
	f.producer.last_ack_ms = 0; /* never acknowledged */
	f.flush.failures_in_row = 1;
	notify_summary(&f.q, buf, sizeof(buf));
	CHECK_STR(buf, "2 connectors running, 0 failed; 0 records acked, 0 failed; "
	               "Kafka not acknowledging, 3 in flight; offset flush failing");
	f.producer.last_ack_ms = loop_now_ms();
	f.flush.failures_in_row = 0;
	notify_summary(&f.q, buf, sizeof(buf));
	CHECK_STR(buf, "2 connectors running, 0 failed; 0 records acked, 0 failed; "
	               "Kafka acknowledging, 3 in flight");
}

/* Without $NOTIFY_SOCKET nothing is sent and nothing is armed. */
static void off_without_socket(void)
{
	struct queryfake f;
	struct loop *l = NULL;
	struct notify *n = NULL;

	unsetenv("NOTIFY_SOCKET");
	queryfake_init(&f, NULL);
	CHECK_INT(loop_new(&l), 0);
	CHECK_INT(notify_open(l, &f.q, &n), NOTIFY_OK);
	CHECK(n != NULL);
	notify_send(n, "READY=1");
	notify_alive(n);
	notify_send(NULL, "READY=1");
	notify_close(n);
	loop_destroy(l);
}

int main(void)
{
	idle_and_failed();
	kafka_silent();
	off_without_socket();
	return testlib_done("notify");
}
