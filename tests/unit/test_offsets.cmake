# Fault injection: every open, write, fsync, close and rename of the offset
# store goes through the __wrap_* functions in test_offsets.c.
target_link_options(${name} PRIVATE -Wl,--wrap=open -Wl,--wrap=write -Wl,--wrap=fsync
                    -Wl,--wrap=close -Wl,--wrap=rename)
