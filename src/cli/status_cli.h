/* status_cli: `skiff status [FILES...]`, the client side of control/status_sock.c.
 * Reads the worker file (default /etc/skiff/skiff.properties) for the
 * offsets file's directory, and nothing else of the configuration (so that
 * it runs without the environment skiff's config providers read), connects
 * to skiff.sock there, prints what the running skiff says. Exit codes: 0
 * healthy, 1 unhealthy, 2 cannot reach it (no socket, refused, no
 * permission, a worker file that cannot be read). */
#ifndef SKIFF_STATUS_CLI_H
#define SKIFF_STATUS_CLI_H

/* argv[0] is "status"; argv[1..] the configuration files. */
int status_main(int argc, char **argv);

#endif
