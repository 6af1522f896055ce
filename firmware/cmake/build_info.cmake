# build-info.json in the build tree: what a run's metadata records about the images it ran
# (compiler, flags, dependency pins; mupq, PQClean and libopencm3 follow pqm4's submodule pins).
function(pqscope_write_build_info)
  get_property(pins GLOBAL PROPERTY PQSCOPE_DEPENDENCY_PINS)
  list(JOIN pins ",\n    " pins_json)
  string(TOUPPER "${CMAKE_BUILD_TYPE}" build_type)
  string(STRIP "${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${build_type}}" c_flags)
  file(WRITE ${CMAKE_BINARY_DIR}/build-info.json
    "{\n  \"compiler\": \"${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}\",\n"
    "  \"c_flags\": \"${c_flags}\",\n  \"build_type\": \"${CMAKE_BUILD_TYPE}\",\n"
    "  \"dependencies\": {\n    ${pins_json}\n  }\n}\n")
endfunction()
