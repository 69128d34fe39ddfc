/* offsets_cli: `skiff offsets list|set|reset|import`, for a stopped skiff
 * (a running one is served by the REST API's /connectors/NAME/offsets): the
 * offsets of the store the configuration names (file, topic or both), in
 * KIP-875's document. Refused while a skiff holds the store. */
#ifndef SKIFF_OFFSETS_CLI_H
#define SKIFF_OFFSETS_CLI_H

/* argv[0] is "offsets". Returns the process's exit code: 0; 78 for what a
 * person must fix (usage, configuration, a document or offset refused); 75
 * when the store is held by a running skiff or cannot be reached. */
int offsets_main(int argc, char **argv);

#endif
