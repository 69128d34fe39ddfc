# The offset store's wrappers and helpers: see test_offsets.cmake.
include(${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/test_offsets.cmake)
