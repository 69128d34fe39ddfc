# The fake producer behind core/sink.h, shared with the record path's tests.
target_sources(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/sinkfake.c)
