# A worker around a scripted source and fake producers (workerrig.c,
# over sinkfake.c).
target_sources(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/workerrig.c
                               ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/sinkfake.c)
