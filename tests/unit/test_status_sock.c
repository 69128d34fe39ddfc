/* skiff.sock from a faked pipeline (queryfake.c): the socket sits next to
 * the offsets file, 0600, and whoever connects reads the summary `skiff
 * status` prints: the verdict first, a line per connector with its
 * counters, backlog and failure, the offset flush, Kafka. */
#include "control/health.h"
#include "control/pmetrics.h"
#include "control/status_sock.h"
#include "core/loop.h"
#include "core/query.h"
#include "core/stats.h"
#include "queryfake.h"
#include "testlib.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Connects to path, lets l serve it, and reads everything into buf. */
static void ask(struct loop *l, const char *path, char *buf, size_t len)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char errbuf[128];
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	CHECK(strlen(path) < sizeof(a.sun_path));
	if (strlen(path) < sizeof(a.sun_path))
		memcpy(a.sun_path, path, strlen(path) + 1);
	CHECK(fd >= 0);
	CHECK_INT(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK(loop_once(l, errbuf, sizeof(errbuf)) >= 0);
	while (got + 1 < len && (n = read(fd, buf + got, len - got - 1)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd);
}

int main(void)
{
	const char *dir = testlib_tmpdir();
	char file[512], path[512], buf[16384], want[256];
	struct queryfake f;
	struct stats *st = NULL;
	struct loop *l = NULL;
	struct health *h = NULL;
	struct status_sock *d = NULL;
	struct stat sb;
	size_t a, b, p;

	snprintf(file, sizeof(file), "%s/offsets.json", dir);
	CHECK_INT(status_sock_path(file, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/skiff.sock", dir);
	CHECK_STR(path, want);
	CHECK_INT(status_sock_path("offsets.json", path, sizeof(path)), 0);
	CHECK_STR(path, "./skiff.sock");
	CHECK_INT(status_sock_path(file, path, 8), -1);

	CHECK_INT(stats_new(&st), 0);
	CHECK_INT(loop_new(&l), 0);
	queryfake_init(&f, st);
	a = queryfake_conn(&f, "logs");
	b = queryfake_conn(&f, "db");
	f.conns[a].produced = 10;
	f.conns[a].acked = 8;
	p = queryfake_part(&f, a, "[\"logs\",{\"filename\":\"/var/log/a\"}]");
	f.backlog_known[p] = true;
	f.backlog[p] = 4096;
	f.conns[b].state = QUERY_FAILED;
	f.conns[b].trace = "database is locked";
	f.producer.in_flight = 2;
	snprintf(f.bandwidth, sizeof(f.bandwidth), "bandwidth: no cap\n");
	CHECK_INT(health_new(&f.q, &h), 0);
	CHECK_INT(status_sock_open(l, &f.q, h, file, &d), STATUS_SOCK_OK);
	CHECK_INT(stat(want, &sb), 0);
	CHECK_INT(sb.st_mode & 0777, 0600);

	ask(l, want, buf, sizeof(buf));
	CHECK(strstr(buf, "UNHEALTHY: connector db FAILED: database is locked\n") != NULL);
	CHECK(strstr(buf, "connector logs: RUNNING; records produced 10, acked 8, failed 0; "
	                  "last ack never; backlog 4096 bytes\n") != NULL);
	CHECK(strstr(buf, "connector db: FAILED; records produced 0, acked 0, failed 0; last ack "
	                  "never\n  failed: database is locked\n") != NULL);
	CHECK(strstr(buf, "offsets: last flush never, ok\n") != NULL);
	CHECK(strstr(buf, "kafka: 2 records in flight; last ack never\nbandwidth: no cap\n") !=
	      NULL);

	status_sock_close(d);
	CHECK(stat(want, &sb) != 0); /* removed */
	pmetrics_unshow(&f.shown[p], true);
	health_destroy(h);
	loop_destroy(l);
	stats_destroy(st);
	return testlib_done("status_sock");
}
