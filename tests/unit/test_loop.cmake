# poll() failing as the kernel makes it fail under a debugger (errno 516,
# ERESTART_RESTARTBLOCK): __wrap_poll in test_loop.c.
target_link_options(${name} PRIVATE -Wl,--wrap=poll)
