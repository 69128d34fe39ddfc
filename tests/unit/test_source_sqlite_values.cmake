# The shared fake worker and helpers of the SQLite source tests.
target_sources(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/sqlitefake.c
                               ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/sourceenv_fake.c)
