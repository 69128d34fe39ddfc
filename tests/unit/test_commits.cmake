# The offset store's fault injection (fsync failures): see test_offsets.cmake.
include(${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/test_offsets.cmake)
