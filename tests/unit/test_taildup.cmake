# The shared fake source environment.
target_sources(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit/sourceenv_fake.c)
