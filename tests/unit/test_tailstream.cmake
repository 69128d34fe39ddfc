# A wall clock stepped back (NTP correcting a board's clock): clock_wall_ns
# of skiff's own code goes through __wrap_clock_wall_ns in test_tailstream.c.
target_link_options(${name} PRIVATE -Wl,--wrap=clock_wall_ns)
# The shared fake source environment.
target_sources(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/sourceenv_fake.c)
