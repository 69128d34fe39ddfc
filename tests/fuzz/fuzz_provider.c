/* fuzz_provider: libFuzzer target for config providers (src/config/provider.c):
 * the declarations a worker file makes and the references its values hold.
 *
 * The input is a properties text. It is read twice:
 *  - as a worker file of its own: providers_new on its declarations (never
 *    resolved: its allowed.paths could name any file);
 *  - as a file whose values are resolved by fixed providers (env, file, dir)
 *    whose allowed.paths is a private directory holding a properties file and
 *    a secrets directory, so nothing outside it is ever opened.
 * In the second reading "@D" in a value stands for that directory, so that
 * the fuzzer reaches the files (dev.properties, s/pw) without knowing its
 * name. Beyond "no crash, no leak, no undefined behaviour": a value without "${"
 * comes back unchanged and not secret; one that resolves is a C string no
 * longer than PROVIDER_MAX_VALUE_BYTES; a failure says why in "file:line:
 * key: ..." form. The directory (/dev/shm preferred) is removed at exit. */
#include "config/props.h"
#include "config/provider.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[256], devfile[300], secrets[300], pwfile[320];

static void cleanup(void)
{
	unlink(devfile);
	unlink(pwfile);
	rmdir(secrets);
	rmdir(dir);
}

static void put_file(const char *name, const char *text)
{
	FILE *f = fopen(name, "wb");

	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

/* The fixed providers, confined to dir. */
static struct providers *make_fixed(void)
{
	char text[2048], err[1024];
	struct props *w = NULL;
	struct providers *pv = NULL;

	snprintf(text, sizeof(text),
	         "config.providers=env,file,dir\n"
	         "config.providers.env.class=EnvVarConfigProvider\n"
	         "config.providers.env.param.allowlist.pattern=^FUZZ_\n"
	         "config.providers.file.class=FileConfigProvider\n"
	         "config.providers.file.param.allowed.paths=%s\n"
	         "config.providers.dir.class=DirectoryConfigProvider\n"
	         "config.providers.dir.param.allowed.paths=%s\n",
	         dir, dir);
	if (props_load_mem("fixed", text, strlen(text), &w, err, sizeof(err)) != 0 ||
	    providers_new(w, &pv, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_provider: %s\n", err);
		exit(1);
	}
	props_destroy(w);
	return pv;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/skiff-fuzz-provider-XXXXXX", base ? base : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror("fuzz_provider");
		exit(1);
	}
	snprintf(devfile, sizeof(devfile), "%s/dev.properties", dir);
	snprintf(secrets, sizeof(secrets), "%s/s", dir);
	snprintf(pwfile, sizeof(pwfile), "%s/pw", secrets);
	put_file(devfile, "device.id=gw-7\nx = a\\\n  b\nempty=\n");
	if (mkdir(secrets, 0700) != 0)
		abort();
	put_file(pwfile, "sec\n");
	setenv("FUZZ_A", "1", 1);
	setenv("FUZZ_B", "${env:FUZZ_A}", 1); /* never resolved twice */
	atexit(cleanup);
	return 0;
}

/* v with every "@D" replaced by dir; malloc'd (NULL: out of memory). */
static char *with_dir(const char *v)
{
	size_t n = 0, dlen = strlen(dir);
	char *out, *o;

	for (const char *p = strstr(v, "@D"); p != NULL; p = strstr(p + 2, "@D"))
		n++;
	out = malloc(strlen(v) + n * dlen + 1);
	if (out == NULL)
		return NULL;
	for (o = out; *v != '\0';) {
		if (v[0] == '@' && v[1] == 'D') {
			memcpy(o, dir, dlen);
			o += dlen;
			v += 2;
		} else {
			*o++ = *v++;
		}
	}
	*o = '\0';
	return out;
}

/* Resolves every value of p with the fixed providers (new for each input:
 * they keep the notices and references they saw) and checks each. */
static void resolve_each(const struct props *p)
{
	struct providers *fixed = make_fixed();

	for (size_t i = 0; i < props_count(p); i++) {
		char *v = with_dir(props_value(p, i));
		char err[1024], *out = NULL;
		bool secret = true;
		int rc;

		if (v == NULL)
			abort();
		rc = providers_expand(fixed, v, "fuzz:1: k", &out, &secret, err, sizeof(err));

		if (rc == 0) {
			if (out == NULL || strlen(out) > PROVIDER_MAX_VALUE_BYTES)
				abort();
			if (strstr(v, "${") == NULL && (secret || strcmp(out, v) != 0))
				abort();
		} else if ((rc != PROVIDER_ERR_CONFIG && rc != PROVIDER_ERR_NOMEM) || out != NULL ||
		           secret || strncmp(err, "fuzz:1: k: ", 11) != 0) {
			abort();
		}
		free(out);
		free(v);
	}
	providers_destroy(fixed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct props *p = NULL;
	struct providers *pv = NULL;
	char err[1024];

	if (props_load_mem("fuzz", (const char *)data, size, &p, err, sizeof(err)) != 0)
		return 0;
	if (providers_new(p, &pv, err, sizeof(err)) == 0)
		providers_destroy(pv);
	resolve_each(p);
	props_destroy(p);
	return 0;
}
