/* help: --help-config, the documentation of every property, as a person reads
 * it or as a program does.
 *
 * The document is JSON (settings_help_doc builds it from the tables, so the
 * binary is its one source). `skiff --help-config=json` prints it as it is;
 * scripts/gen-docs.py turns it into docs/properties.md and the man page
 * skiff.properties(5), and a test fails when those disagree with the binary.
 * Its shape, version 1 (a change that breaks a reader bumps "version"):
 *
 *   {"format": "skiff-help-config", "version": 1,
 *    "sections": [{"id": "worker" | "rest" | "connector" | "source", "title": "...",
 *                  "kind": "file" (sources), "classes": ["FileStreamSource", ...],
 *                  "keys": [{"name", "type": "string|int|boolean|list|enum|class",
 *                            "required", "secret", "doc",
 *                            "default"?, "min"?, "max"? (decimal text), "choices"?}],
 *                  "ignored": ["plugin.path", ...],
 *                  "patterns"? (worker): [{"name", "doc", "defaults"?: {key: value}}]}],
 *    "chain_keys": [{"name", "doc"}],
 *    "transforms", "predicates": [{"class", "variants", "doc", "properties"}]}
 *
 * Start-up only; prints to the stream given. */
#ifndef SKIFF_HELP_H
#define SKIFF_HELP_H

#include <stdio.h>

struct cJSON;

/* Prints the document as text for a terminal (--help-config). */
void help_print_text(const struct cJSON *doc, FILE *fp);

#endif
