# A wall clock stepped back (NTP correcting a board's clock): clock_file_ns
# of skiff's own code goes through __wrap_clock_file_ns in test_tailstream.c.
target_link_options(${name} PRIVATE -Wl,--wrap=clock_file_ns)
