# libopencm3 as pinned by pqm4's submodule, built for one family with its own Makefile.
# Creates the imported target opencm3::<family> (e.g. opencm3::stm32f4 for "stm32/f4").
function(pqscope_add_libopencm3 family_path)
  FetchContent_MakeAvailable(pqm4)
  set(root "${pqm4_SOURCE_DIR}/libopencm3")
  string(REPLACE "/" "" family "${family_path}")
  set(archive "${root}/lib/libopencm3_${family}.a")
  if(TARGET opencm3::${family})
    return()
  endif()
  find_program(MAKE_EXECUTABLE NAMES gmake make REQUIRED)
  # arm-none-eabi-gcc's, whichever compiler makes the images' C (PQSCOPE_COMPILER): libopencm3
  # only brings up the clock and the UART, outside every measured operation.
  get_filename_component(prefix_dir "${CMAKE_ASM_COMPILER}" DIRECTORY)
  add_custom_command(
    OUTPUT "${archive}"
    COMMAND "${MAKE_EXECUTABLE}" -C "${root}" TARGETS=${family_path} PREFIX=${prefix_dir}/arm-none-eabi- V=0
    COMMENT "Building libopencm3 (${family_path}) with its own Makefile"
    VERBATIM)
  add_custom_target(libopencm3_${family}_build DEPENDS "${archive}")
  # An INTERFACE target (not IMPORTED) so that users also wait for the Makefile build, which
  # generates some of the headers.
  add_library(libopencm3_${family} INTERFACE)
  target_link_libraries(libopencm3_${family} INTERFACE "${archive}")
  target_include_directories(libopencm3_${family} INTERFACE "${root}/include")
  target_link_directories(libopencm3_${family} INTERFACE "${root}/lib")
  add_dependencies(libopencm3_${family} libopencm3_${family}_build)
  add_library(opencm3::${family} ALIAS libopencm3_${family})
endfunction()
