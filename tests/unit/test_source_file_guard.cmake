# The shared fake of the worker's side of a source.
target_sources(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/sourceenv_fake.c)
