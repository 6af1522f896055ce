# Turns the scheme catalogue (firmware/schemes/catalogue.json, also read by the host tool) into
# one image target per row: image.<scheme>.<impl> -> <build>/images/<scheme>/<impl>.elf.

function(pqscope_add_image)
  cmake_parse_arguments(arg "" "SCHEME;IMPL;SOURCE_DIR;STACK_BYTES" "SYMMETRIC;DEFINES" ${ARGN})
  set(target image.${arg_SCHEME}.${arg_IMPL})
  file(GLOB sources CONFIGURE_DEPENDS
    ${arg_SOURCE_DIR}/*.c ${arg_SOURCE_DIR}/*.S ${arg_SOURCE_DIR}/*.s)
  if(NOT sources)
    message(FATAL_ERROR "${arg_SCHEME}/${arg_IMPL}: no sources in ${arg_SOURCE_DIR}")
  endif()
  add_executable(${target} ${sources})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${arg_IMPL} SUFFIX .elf
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/images/${arg_SCHEME})
  target_include_directories(${target} PRIVATE ${arg_SOURCE_DIR})
  target_compile_definitions(${target} PRIVATE
    PQSCOPE_SCHEME="${arg_SCHEME}" PQSCOPE_IMPL="${arg_IMPL}" ${arg_DEFINES})
  list(TRANSFORM arg_SYMMETRIC PREPEND pqscope_sym_)
  target_link_libraries(${target} PRIVATE pqscope_harness ${arg_SYMMETRIC})
  target_link_options(${target} PRIVATE
    -Wl,--defsym=__pqscope_stack_reserve=${arg_STACK_BYTES}
    -Wl,-Map=${CMAKE_BINARY_DIR}/images/${arg_SCHEME}/${arg_IMPL}.map)
endfunction()

function(pqscope_add_catalogue_images catalogue)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${catalogue})
  file(READ ${catalogue} json)
  string(JSON rows LENGTH "${json}" implementations)
  math(EXPR last "${rows} - 1")
  foreach(i RANGE ${last})
    string(JSON row GET "${json}" implementations ${i})
    string(JSON scheme GET "${row}" scheme)
    string(JSON impl GET "${row}" impl)
    string(JSON status GET "${row}" status)
    if(NOT status STREQUAL "ok")
      continue()
    endif()
    string(JSON dependency GET "${row}" source dependency)
    string(JSON path GET "${row}" source path)
    string(JSON stack_bytes GET "${row}" stack_bytes)
    foreach(key symmetric defines)
      set(${key} "")
      string(JSON n LENGTH "${row}" ${key})
      if(n GREATER 0)
        math(EXPR n_last "${n} - 1")
        foreach(j RANGE ${n_last})
          string(JSON item GET "${row}" ${key} ${j})
          list(APPEND ${key} ${item})
        endforeach()
      endif()
    endforeach()
    FetchContent_MakeAvailable(${dependency})
    pqscope_add_image(SCHEME ${scheme} IMPL ${impl}
      SOURCE_DIR ${${dependency}_SOURCE_DIR}/${path}
      STACK_BYTES ${stack_bytes} SYMMETRIC ${symmetric} DEFINES ${defines})
  endforeach()
endfunction()
