# Out-of-memory injection: every calloc of skiff's own code goes through
# __wrap_calloc in test_worker.c (librdkafka, a shared library, is not wrapped).
target_link_options(${name} PRIVATE -Wl,--wrap=calloc)
