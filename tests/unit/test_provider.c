/* test_provider: Connect's config providers and ConfigTransformer's
 * references. The expected results are what Kafka 3.9.1's ConfigTransformer
 * with its EnvVarConfigProvider, FileConfigProvider and
 * DirectoryConfigProvider gave for the same values on the JVM, except where
 * skiff refuses a reference Connect would keep as text (marked "skiff:"). */
#include "config/config.h"
#include "config/props.h"
#include "config/provider.h"
#include "config/settings.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char dir[512], devfile[600], secrets[600];
static const char dev[] = "device.id=gw-7\nx = a\\\n  b\n";

static struct providers *make(const char *extra)
{
	char text[4096];
	struct props *w = NULL;
	struct providers *pv = NULL;
	char err[1024];

	snprintf(text, sizeof(text),
	         "config.providers=env, file,dir\n"
	         "config.providers.env.class="
	         "org.apache.kafka.common.config.provider.EnvVarConfigProvider\n"
	         "config.providers.file.class="
	         "org.apache.kafka.common.config.provider.FileConfigProvider\n"
	         "config.providers.dir.class=DirectoryConfigProvider\n%s",
	         extra);
	if (props_load_mem("w.properties", text, strlen(text), &w, err, sizeof(err)) != 0 ||
	    providers_new(w, &pv, err, sizeof(err)) != 0)
		fprintf(stderr, "make: %s\n", err);
	props_destroy(w);
	return pv;
}

/* The value v resolves to, or "ERR: why". Static storage. */
static const char *expand(struct providers *pv, const char *v)
{
	static char res[4096];
	char err[1024], *out = NULL;
	bool secret;

	if (providers_expand(pv, v, "w.properties:9: k", &out, &secret, err, sizeof(err)) != 0) {
		snprintf(res, sizeof(res), "ERR: %s", err);
		return res;
	}
	snprintf(res, sizeof(res), "%s", out);
	free(out);
	return res;
}

static bool has(const char *s, const char *part)
{
	if (strstr(s, part) != NULL)
		return true;
	fprintf(stderr, "  '%s' lacks '%s'\n", s, part);
	return false;
}

static void test_references(void)
{
	struct providers *pv = make("config.providers.env.param.allowlist.pattern=SKF_.*\n");
	char v[1024];

	CHECK(pv != NULL);
	setenv("SKF_A", "1", 1);
	setenv("SKF_B", "2", 1);
	setenv("OTHER", "3", 1);
	CHECK_STR(expand(pv, "${env:SKF_A}"), "1");
	CHECK_STR(expand(pv, "${env:SKF_A}-${env:SKF_B}"), "1-2");
	CHECK_STR(expand(pv, "$${env:SKF_A}"), "$1");
	/* The pattern's [^}]: "x${env" is the provider, unknown: text. */
	CHECK_STR(expand(pv, "${x${env:SKF_A}}"), "${x${env:SKF_A}}");
	CHECK_STR(expand(pv, "${env:SKF_A"), "${env:SKF_A");
	CHECK_STR(expand(pv, "${:SKF_A}"), "${:SKF_A}");
	CHECK_STR(expand(pv, "${nop:a:b}"), "${nop:a:b}");
	CHECK_STR(expand(pv, "no refs ${here} at all"), "no refs ${here} at all");
	CHECK(has(expand(pv, "${env:p:SKF_A}"),
	          "w.properties:9: k: env (EnvVarConfigProvider): a path ('p') is not supported"));
	/* skiff: Connect keeps these as text. */
	CHECK(has(expand(pv, "${env:OTHER}"), "OTHER is outside allowlist.pattern"));
	CHECK(has(expand(pv, "${env:SKF_UNSET_X}"), "SKF_UNSET_X is not set"));

	snprintf(v, sizeof(v), "id=${file:%s:device.id}", devfile);
	CHECK_STR(expand(pv, v), "id=gw-7");
	snprintf(v, sizeof(v), "${file:%s:x}", devfile);
	CHECK_STR(expand(pv, v), "ab"); /* a continuation line, as Properties reads it */
	snprintf(v, sizeof(v), "${file:%s:no.key}", devfile);
	CHECK(has(expand(pv, v), "file (FileConfigProvider): "));
	CHECK(has(expand(pv, v), "dev.properties has no key 'no.key'"));
	snprintf(v, sizeof(v), "${file:%s/missing.properties:k}", dir);
	CHECK(has(expand(pv, v), "missing.properties: No such file or directory"));
	CHECK(has(expand(pv, "${file:k}"), "no path"));

	snprintf(v, sizeof(v), "${dir:%s:pw}", secrets);
	CHECK_STR(expand(pv, v), "sec\n"); /* the whole file */
	snprintf(v, sizeof(v), "${dir:%s:nope}", secrets);
	CHECK(has(expand(pv, v), "nope: No such file or directory"));
	snprintf(v, sizeof(v), "${dir:%s:../dev.properties}", secrets);
	CHECK(has(expand(pv, v), "is not a file name"));
	snprintf(v, sizeof(v), "${dir:%s/nodir:pw}", dir);
	CHECK(has(expand(pv, v), "nodir: No such file"));
	providers_destroy(pv);
}

static void test_allowed_paths(void)
{
	char extra[2048], v[1024];
	struct providers *pv;

	snprintf(extra, sizeof(extra),
	         "config.providers.file.param.allowed.paths= /nowhere , %s/ok\n", dir);
	pv = make(extra);
	CHECK(pv != NULL);
	snprintf(v, sizeof(v), "${file:%s/ok/../ok/./dev.properties:device.id}", dir);
	CHECK_STR(expand(pv, v), "gw-7");
	snprintf(v, sizeof(v), "${file:%s/ok/../notok.properties:z}", dir);
	CHECK(has(expand(pv, v), "is outside allowed.paths"));
	snprintf(v, sizeof(v), "${file:%s/okay/dev.properties:z}", dir);
	CHECK(has(expand(pv, v), "is outside allowed.paths"));
	providers_destroy(pv);
}

static void test_declarations(void)
{
	struct props *w = NULL, *c = NULL;
	struct providers *pv = NULL;
	char err[1024];
	const char *bad = "config.providers=vault\nconfig.providers.vault.class=io.x.Vault\n";
	const char *none = "config.providers=a,b\nconfig.providers.a.class=FileConfigProvider\n";
	const char *conn = "topic=t-${env:SKF_A}\nplain=${nop:x}\nconfig.providers=not.resolved\n";

	CHECK(props_load_mem("w.properties", bad, strlen(bad), &w, err, sizeof(err)) == 0);
	CHECK_INT(providers_new(w, &pv, err, sizeof(err)), PROVIDER_ERR_CONFIG);
	CHECK(has(err, "w.properties:2: config.providers.vault.class: 'io.x.Vault' is not a"));
	props_destroy(w);
	CHECK(props_load_mem("w.properties", none, strlen(none), &w, err, sizeof(err)) == 0);
	CHECK_INT(providers_new(w, &pv, err, sizeof(err)), PROVIDER_ERR_CONFIG);
	CHECK(has(err, "w.properties:1: config.providers: provider 'b' has no "
	               "config.providers.b.class"));
	props_destroy(w);

	pv = make("");
	CHECK(props_load_mem("c.properties", conn, strlen(conn), &c, err, sizeof(err)) == 0);
	CHECK_INT(providers_resolve(pv, c, err, sizeof(err)), 0);
	CHECK_STR(props_get(c, "topic"), "t-1");
	CHECK(props_secret(c, 0));
	CHECK_STR(props_get(c, "plain"), "${nop:x}");
	CHECK(!props_secret(c, 1));
	CHECK_INT(providers_notice_count(pv), 1);
	CHECK(has(providers_notice(pv, 0), "c.properties:2: plain: ${nop:...} names no provider"));
	props_destroy(c);
	providers_destroy(pv);
}

/* Through settings_load: a provider's value is resolved in a connector file,
 * and every way a person sees the configuration shows it hidden. */
static void test_settings_hide_it(void)
{
	char wpath[700], cpath[700], text[2048], err[1024];
	char *paths[2] = {wpath, cpath};
	struct settings s;
	const struct config_section *c;
	const char *key, *shown;
	size_t cur = 0;
	bool seen = false;

	snprintf(wpath, sizeof(wpath), "%s/w.properties", dir);
	snprintf(cpath, sizeof(cpath), "%s/c.properties", dir);
	snprintf(text, sizeof(text),
	         "offset.storage.file.filename=%s/offsets\n"
	         "config.providers=file\n"
	         "config.providers.file.class=FileConfigProvider\n"
	         "producer.client.id=${file:%s:device.id}\n",
	         dir, devfile);
	testlib_write_file(wpath, text, strlen(text));
	snprintf(text, sizeof(text),
	         "name=c\nconnector.class=FileStreamSource\nfile=/tmp/x.log\n"
	         "topic=t-${file:%s:device.id}\n",
	         devfile);
	testlib_write_file(cpath, text, strlen(text));
	CHECK_INT(settings_load(paths, 2, &s, err, sizeof(err)), 0);
	c = s.connectors[0].cfg;
	CHECK_STR(config_str(c, "topic"), "t-gw-7");
	CHECK_STR(config_shown(c, "topic"), "[hidden]");
	CHECK_STR(config_shown(c, "file"), "/tmp/x.log");
	while (config_next_set(c, &cur, &key, &shown))
		if (strcmp(key, "topic") == 0)
			seen = strcmp(shown, "[hidden]") == 0;
	CHECK(seen);
	CHECK_STR(config_passthrough_key(s.worker, 0), "producer.client.id");
	CHECK_STR(config_passthrough_value(s.worker, 0), "gw-7");
	CHECK_STR(config_passthrough_shown(s.worker, 0), "[hidden]");
	settings_destroy(&s);
}

int main(void)
{
	char path[700];

	snprintf(dir, sizeof(dir), "%s", testlib_tmpdir());
	snprintf(path, sizeof(path), "%s/ok", dir);
	mkdir(path, 0700);
	snprintf(devfile, sizeof(devfile), "%s/ok/dev.properties", dir);
	testlib_write_file(devfile, dev, strlen(dev));
	snprintf(path, sizeof(path), "%s/notok.properties", dir);
	testlib_write_file(path, "z=1\n", 4);
	snprintf(secrets, sizeof(secrets), "%s/ok/d", dir);
	mkdir(secrets, 0700);
	snprintf(path, sizeof(path), "%s/pw", secrets);
	testlib_write_file(path, "sec\n", 4);
	test_references();
	test_allowed_paths();
	test_declarations();
	test_settings_hide_it();
	return testlib_done("test_provider");
}
