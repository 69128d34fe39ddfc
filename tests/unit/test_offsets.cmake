# Fault injection: every open, write, fsync, close and rename of the offset
# store goes through the __wrap_* functions in offsetsfake.c, shared by the
# test_offsets* executables. open64: what open() is on a 32-bit target built
# with _FILE_OFFSET_BITS=64.
target_sources(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/offsetsfake.c)
target_link_options(${name} PRIVATE -Wl,--wrap=open -Wl,--wrap=open64 -Wl,--wrap=write -Wl,--wrap=fsync
                    -Wl,--wrap=close -Wl,--wrap=rename)
