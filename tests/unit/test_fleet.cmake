# The pipeline's query and the fleet's Kafka link, faked.
target_sources(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/queryfake.c
                               ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/fleetlinkfake.c)
