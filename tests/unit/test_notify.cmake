# The pipeline's query, faked (queryfake.c).
target_sources(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/queryfake.c)
