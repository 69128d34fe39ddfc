# A worker around a scripted source and fake producers (workerrig.c, over
# sinkfake.c), and the offset store's fault injection (offsetsfake.c's
# wrappers, see test_offsets.cmake).
target_sources(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/workerrig.c
                               ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/sinkfake.c)
include(${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/test_offsets.cmake)
