# Unity (pinned in firmware/cmake/dependencies.cmake) with pqscope's configuration, and
# pqscope_add_unity_test(): one test program per source file, judged by Unity's summary line
# (a board's exit code says nothing, so ctest reads the output).
FetchContent_MakeAvailable(unity)
set(PQSCOPE_TEST_SUPPORT_DIR ${CMAKE_CURRENT_LIST_DIR})

add_library(pqscope_unity INTERFACE)
target_sources(pqscope_unity INTERFACE ${unity_SOURCE_DIR}/src/unity.c)
target_include_directories(pqscope_unity INTERFACE ${unity_SOURCE_DIR}/src ${PQSCOPE_TEST_SUPPORT_DIR})
target_compile_definitions(pqscope_unity INTERFACE UNITY_INCLUDE_CONFIG_H)

set(PQSCOPE_UNITY_PASS " Tests 0 Failures ")
set(PQSCOPE_UNITY_FAIL "[1-9][0-9]* Failures|:FAIL|vboard: error")

# pqscope_add_unity_test(NAME <name> SOURCE <file> LIBS <targets...> [COMMAND_PREFIX <cmd...>])
# LIBS include Unity: pqscope_unity, or a library that holds it.
function(pqscope_add_unity_test)
  cmake_parse_arguments(arg "" "NAME;SOURCE" "LIBS;COMMAND_PREFIX" ${ARGN})
  add_executable(${arg_NAME} ${arg_SOURCE})
  target_link_libraries(${arg_NAME} PRIVATE ${arg_LIBS})
  add_test(NAME ${arg_NAME} COMMAND ${arg_COMMAND_PREFIX} $<TARGET_FILE:${arg_NAME}>)
  set_tests_properties(${arg_NAME} PROPERTIES
    PASS_REGULAR_EXPRESSION "${PQSCOPE_UNITY_PASS}"
    FAIL_REGULAR_EXPRESSION "${PQSCOPE_UNITY_FAIL}")
endfunction()
