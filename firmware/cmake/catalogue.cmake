# Turns the scheme catalogue (firmware/schemes/catalogue.json, also read by the host tool) into
# two images per row, linked from the same objects (each source compiled once, with the row's
# defines, the harness's included):
#   image.<scheme>.<impl>         -> <build>/images/<scheme>/<impl>.elf
#   image.<scheme>.<impl>.probed  -> <build>/images/<scheme>/<impl>.probed.elf, with probes
#                                    (firmware/cmake/probes.cmake); only built when asked for
# The probes of a row's probed image: its retry_function, public_functions and probes, then the
# cache variable PQSCOPE_EXTRA_PROBES (a ;-list, e.g. from the host tool's --probe), duplicates
# removed. A row without any has no probed image.
#
# Row fields used here (all but scheme, impl, source, stack_bytes and status optional):
#   status            "ok" (built), or why the row is not built ("does-not-fit"; "reason" explains)
#   boards            {"<board>": <status>}: the status on a board (PQSCOPE_BOARD) where it differs
#   source            {"dependency": <FetchContent name, or "pqscope" for this repository>,
#                      "path": <implementation directory in it>}
#   api               "signature" (crypto_sign_signature/_verify, default) or "signed-message"
#                     (crypto_sign/crypto_sign_open)
#   namespace         prefix of the API names and CRYPTO_* macros (PQClean: "PQCLEAN_..._CLEAN_")
#   symmetric         shared primitives, pqscope_sym_<name> targets (firmware/CMakeLists.txt)
#   libraries         further link libraries: CMake targets or system libraries ("m")
#   defines           compile definitions for the whole image
#   config_overrides  [{"file", "replace", "with"}]: textual edits of upstream files, applied to a
#                     copy of the implementation directory in the build tree
#   host_reference    impl (same scheme, portable sources: a catalogue row or a pqm4 folder) whose
#                     host build must produce the same transcripts as this row's image
#                     (firmware/transcripts)
#   extra_sources     [{"dependency", "path", "files", "config_overrides"}]: files of another
#                     directory compiled into the image, that directory on the include path after
#                     the row's own (e.g. Falcon's fpr.c and headers under a microbenchmark); its
#                     overrides, like the row's, edit a build-tree copy
#   retry_function, public_functions
#                     read by the host tool's constant-time test; also probes of the probed image
#   slow              true: billions of cycles a signature; its image and host transcript program
#                     are left out of "all", built when asked for (the slow tier's tests)
#   probes            further functions the probed image measures (at most 8 or so: each probed
#                     call costs cycles, and on the virtual board two exact counter reads). They
#                     must be global functions called across object files (probes.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/probes.cmake)
set(PQSCOPE_EXTRA_PROBES "" CACHE STRING
  "Functions every probed image also measures (a ;-list; the host tool's --probe sets it)")

# Reads a JSON array member of `json` into a CMake list (empty if the member is absent).
function(pqscope_json_list out json key)
  set(items "")
  string(JSON n ERROR_VARIABLE missing LENGTH "${json}" ${key})
  if(NOT missing AND n GREATER 0)
    math(EXPR n_last "${n} - 1")
    foreach(j RANGE ${n_last})
      string(JSON item GET "${json}" ${key} ${j})
      list(APPEND items "${item}")
    endforeach()
  endif()
  set(${out} "${items}" PARENT_SCOPE)
endfunction()

# Reads an optional string member of `json` (default if absent).
function(pqscope_json_string out json key default)
  string(JSON value ERROR_VARIABLE missing GET "${json}" ${key})
  if(missing)
    set(value "${default}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# Copies an implementation directory into the build tree and applies the row's overrides there:
# upstream text stays untouched, and every compiled file (including the implementation's own
# sibling #includes) sees the edit. An override whose text is not found is an error, so an
# upstream change cannot silently undo it. Sets `out` to the copy's directory.
function(pqscope_apply_overrides out source_dir copy_dir overrides_json)
  file(REMOVE_RECURSE ${copy_dir})
  file(COPY ${source_dir}/ DESTINATION ${copy_dir})
  string(JSON n LENGTH "${overrides_json}")
  math(EXPR n_last "${n} - 1")
  foreach(i RANGE ${n_last})
    string(JSON file GET "${overrides_json}" ${i} file)
    string(JSON replace GET "${overrides_json}" ${i} replace)
    string(JSON with GET "${overrides_json}" ${i} with)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source_dir}/${file})
    file(READ ${copy_dir}/${file} text)
    string(FIND "${text}" "${replace}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "config override: '${replace}' not found in ${source_dir}/${file}")
    endif()
    string(REPLACE "${replace}" "${with}" text "${text}")
    file(WRITE ${copy_dir}/${file} "${text}")
  endforeach()
  set(${out} ${copy_dir} PARENT_SCOPE)
endfunction()

# An OBJECT library of the implementation in `SOURCE_DIR` with `HARNESS` (the board harness or the
# host transcript program), all compiled with the row's defines; the arguments are the catalogue
# row's, see above. Executables link it with target_link_libraries, which also brings the
# harness's libraries and link options.
#   EXTRA_SOURCES and INCLUDE_DIRS: further files and include directories (a row's extra_sources).
function(pqscope_add_scheme_objects target harness)
  cmake_parse_arguments(arg "" "SCHEME;IMPL;SOURCE_DIR;API;NAMESPACE"
    "SYMMETRIC;LIBRARIES;DEFINES;EXTRA_SOURCES;INCLUDE_DIRS" ${ARGN})
  set(api_define "")
  if(arg_API STREQUAL "signed-message")
    set(api_define PQSCOPE_API_SIGNED_MESSAGE)
  elseif(arg_API AND NOT arg_API STREQUAL "signature")
    message(FATAL_ERROR "${arg_SCHEME}/${arg_IMPL}: api '${arg_API}' is not signature or signed-message")
  endif()
  file(GLOB sources CONFIGURE_DEPENDS
    ${arg_SOURCE_DIR}/*.c ${arg_SOURCE_DIR}/*.S ${arg_SOURCE_DIR}/*.s)
  if(NOT sources)
    message(FATAL_ERROR "${arg_SCHEME}/${arg_IMPL}: no sources in ${arg_SOURCE_DIR}")
  endif()
  add_library(${target} OBJECT ${sources} ${arg_EXTRA_SOURCES})
  target_include_directories(${target} PRIVATE ${arg_SOURCE_DIR} ${arg_INCLUDE_DIRS})
  target_compile_definitions(${target} PRIVATE
    PQSCOPE_SCHEME="${arg_SCHEME}" PQSCOPE_IMPL="${arg_IMPL}" PQSCOPE_NAMESPACE=${arg_NAMESPACE}
    ${api_define} ${arg_DEFINES})
  list(TRANSFORM arg_SYMMETRIC PREPEND pqscope_sym_)
  target_link_libraries(${target} PRIVATE ${harness} ${arg_SYMMETRIC} ${arg_LIBRARIES})
  # The symmetric primitives' headers before the harness's (mupq/common), as pqm4 orders them: where
  # both have a header (aes-publicinputs.h), pqm4's names its assembly, mupq's its portable C.
  foreach(library ${arg_SYMMETRIC})
    target_include_directories(${target} PRIVATE $<TARGET_PROPERTY:${library},INTERFACE_INCLUDE_DIRECTORIES>)
  endforeach()
endfunction()

# An image linked from `objects` (pqscope_add_scheme_objects): <build>/images/<scheme>/<name>.elf
# with its map file beside it, the scheme's stack need reserved.
function(pqscope_add_image_executable target objects scheme name stack_bytes)
  add_executable(${target})
  target_link_libraries(${target} PRIVATE ${objects})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${name} SUFFIX .elf
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/images/${scheme})
  target_link_options(${target} PRIVATE
    -Wl,--defsym=__pqscope_stack_reserve=${stack_bytes}
    -Wl,-Map=${CMAKE_BINARY_DIR}/images/${scheme}/${name}.map)
endfunction()

# A host program (transcripts) of the implementation: pqscope_add_scheme_objects' arguments.
function(pqscope_add_scheme_executable target harness)
  pqscope_add_scheme_objects(${target}.objects ${harness} ${ARGN})
  add_executable(${target})
  target_link_libraries(${target} PRIVATE ${target}.objects)
endfunction()

# The images of any directory implementing the pqm4/NIST signature API (api.h with the CRYPTO_*
# sizes and either crypto_sign_signature/crypto_sign_verify or crypto_sign/crypto_sign_open):
#   pqscope_add_image(SCHEME <name> IMPL <name> SOURCE_DIR <dir> STACK_BYTES <n>
#                     [API signature|signed-message] [NAMESPACE <prefix>]
#                     [SYMMETRIC <names...>] [LIBRARIES <libs...>] [DEFINES <defs...>]
#                     [PROBES <functions...>])
# creates image.<scheme>.<impl> -> <build>/images/<scheme>/<impl>.elf and, if PROBES or
# PQSCOPE_EXTRA_PROBES name any function, image.<scheme>.<impl>.probed -> <impl>.probed.elf
# (not part of "all").
function(pqscope_add_image)
  cmake_parse_arguments(arg "" "SCHEME;IMPL;STACK_BYTES" "PROBES" ${ARGN})
  set(target image.${arg_SCHEME}.${arg_IMPL})
  pqscope_add_scheme_objects(${target}.objects pqscope_harness SCHEME ${arg_SCHEME} IMPL ${arg_IMPL}
    ${arg_UNPARSED_ARGUMENTS})
  pqscope_add_image_executable(${target} ${target}.objects ${arg_SCHEME} ${arg_IMPL} ${arg_STACK_BYTES})
  set(probes ${arg_PROBES} ${PQSCOPE_EXTRA_PROBES})
  list(REMOVE_DUPLICATES probes)
  if(probes)
    pqscope_add_image_executable(${target}.probed ${target}.objects ${arg_SCHEME} ${arg_IMPL}.probed
      ${arg_STACK_BYTES})
    set_target_properties(${target}.probed PROPERTIES EXCLUDE_FROM_ALL TRUE)
    pqscope_add_probes(${target}.probed NAMES ${probes} PLAIN ${target})
  endif()
endfunction()

# A directory `path` of `dependency` (fetched), or its copy `copy_dir` edited by the overrides in
# member `overrides_key` of `json` if it has any.
function(pqscope_dependency_dir out dependency path json overrides_key copy_dir)
  if(NOT dependency STREQUAL PROJECT_NAME)
    FetchContent_MakeAvailable(${dependency})
  endif()
  set(dir ${${dependency}_SOURCE_DIR}/${path})
  string(JSON overrides ERROR_VARIABLE no_overrides GET "${json}" ${overrides_key})
  if(NOT no_overrides)
    pqscope_apply_overrides(dir ${dir} ${copy_dir} "${overrides}")
  endif()
  set(${out} ${dir} PARENT_SCOPE)
endfunction()

# The source directory of a catalogue row (fetched, and copied with its overrides if it has any).
function(pqscope_row_source_dir out row scheme impl)
  string(JSON dependency GET "${row}" source dependency)
  string(JSON path GET "${row}" source path)
  pqscope_dependency_dir(dir ${dependency} ${path} "${row}" config_overrides
    ${CMAKE_BINARY_DIR}/sources/${scheme}/${impl})
  set(${out} ${dir} PARENT_SCOPE)
endfunction()

# The files and include directories of a row's extra_sources (each fetched, and copied with its
# overrides beside the row's copy if it has any).
function(pqscope_row_extra_sources files_out dirs_out row scheme impl)
  set(files "")
  set(dirs "")
  string(JSON n ERROR_VARIABLE none LENGTH "${row}" extra_sources)
  if(NOT none AND n GREATER 0)
    math(EXPR n_last "${n} - 1")
    foreach(i RANGE ${n_last})
      string(JSON entry GET "${row}" extra_sources ${i})
      string(JSON dependency GET "${entry}" dependency)
      string(JSON path GET "${entry}" path)
      pqscope_dependency_dir(dir ${dependency} ${path} "${entry}" config_overrides
        ${CMAKE_BINARY_DIR}/sources/${scheme}/${impl}.extra-${i})
      pqscope_json_list(entry_files "${entry}" files)
      if(NOT entry_files)
        message(FATAL_ERROR "${scheme}/${impl}: extra_sources entry ${i} lists no files")
      endif()
      list(TRANSFORM entry_files PREPEND ${dir}/)
      list(APPEND files ${entry_files})
      list(APPEND dirs ${dir})
    endforeach()
  endif()
  set(${files_out} "${files}" PARENT_SCOPE)
  set(${dirs_out} "${dirs}" PARENT_SCOPE)
endfunction()

# Reads row `index` of the catalogue held in variable `json_var` into row_<field> variables of the
# caller (list fields as lists, absent optional fields empty). The catalogue is passed by name: a
# macro argument's value would have its backslashes (the JSON's escapes) re-read.
macro(pqscope_read_row json_var index)
  string(JSON row GET "${${json_var}}" implementations ${index})
  string(JSON row_scheme GET "${row}" scheme)
  string(JSON row_impl GET "${row}" impl)
  string(JSON row_status GET "${row}" status)
  # A board of its own ("boards": {"<board>": "<status>"}) overrides the row's status on that board.
  string(JSON row_board_status ERROR_VARIABLE row_same_on_every_board GET "${row}" boards "${PQSCOPE_BOARD}")
  if(NOT row_same_on_every_board)
    set(row_status ${row_board_status})
  endif()
  string(JSON row_stack_bytes GET "${row}" stack_bytes)
  pqscope_json_string(row_api "${row}" api signature)
  pqscope_json_string(row_namespace "${row}" namespace "")
  pqscope_json_string(row_host_reference "${row}" host_reference "")
  pqscope_json_list(row_symmetric "${row}" symmetric)
  pqscope_json_list(row_libraries "${row}" libraries)
  pqscope_json_list(row_defines "${row}" defines)
  pqscope_json_string(row_retry_function "${row}" retry_function "")
  pqscope_json_list(row_public_functions "${row}" public_functions)
  pqscope_json_list(row_probes "${row}" probes)
  pqscope_json_string(row_slow "${row}" slow OFF)
endmacro()

# The build arguments of the row last read by pqscope_read_row (fetching its source).
macro(pqscope_row_build_arguments out)
  pqscope_row_source_dir(row_source_dir "${row}" ${row_scheme} ${row_impl})
  pqscope_row_extra_sources(row_extra_sources row_include_dirs "${row}" ${row_scheme} ${row_impl})
  set(${out} SCHEME ${row_scheme} IMPL ${row_impl} SOURCE_DIR ${row_source_dir} API ${row_api}
    NAMESPACE "${row_namespace}" SYMMETRIC ${row_symmetric} LIBRARIES ${row_libraries}
    DEFINES ${row_defines} EXTRA_SOURCES ${row_extra_sources} INCLUDE_DIRS ${row_include_dirs})
endmacro()

function(pqscope_add_catalogue_images catalogue)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${catalogue})
  file(READ ${catalogue} json)
  string(JSON rows LENGTH "${json}" implementations)
  math(EXPR last "${rows} - 1")
  foreach(i RANGE ${last})
    pqscope_read_row(json ${i})
    if(row_status STREQUAL "ok")
      pqscope_row_build_arguments(arguments)
      pqscope_add_image(${arguments} STACK_BYTES ${row_stack_bytes}
        PROBES ${row_retry_function} ${row_public_functions} ${row_probes})
      # A slow row's image (a quarter of the tree's compile steps) is built when asked for: by the
      # host tool as any image, by the slow tier's tests (tests/virtual-board/conftest.py).
      if(row_slow)
        set_target_properties(image.${row_scheme}.${row_impl} image.${row_scheme}.${row_impl}.objects
          PROPERTIES EXCLUDE_FROM_ALL TRUE)
      endif()
    endif()
  endforeach()
endfunction()

# Host transcript programs: every row some row names as its "host_reference" (an implementation of
# the same scheme with portable sources), built natively as transcript.<scheme>.<impl> ->
# <build>/transcripts/transcript.<scheme>.<impl>, linked with `harness` (firmware/transcripts).
function(pqscope_add_catalogue_transcripts catalogue harness)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${catalogue})
  file(READ ${catalogue} json)
  string(JSON rows LENGTH "${json}" implementations)
  math(EXPR last "${rows} - 1")
  set(references "")
  set(quick_references "")  # those a row of the quick tier (not "slow") is checked against
  foreach(i RANGE ${last})
    pqscope_read_row(json ${i})
    if(row_host_reference)
      list(APPEND references ${row_scheme}/${row_host_reference})
      if(NOT row_slow)
        list(APPEND quick_references ${row_scheme}/${row_host_reference})
      endif()
    endif()
  endforeach()
  foreach(i RANGE ${last})
    pqscope_read_row(json ${i})
    if(${row_scheme}/${row_impl} IN_LIST references)
      set(target transcript.${row_scheme}.${row_impl})
      pqscope_row_build_arguments(arguments)
      pqscope_add_scheme_executable(${target} ${harness} ${arguments})
      set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/transcripts)
      # Only the slow tier's rows need it: built when their test asks for it (test_transcripts.py).
      if(NOT ${row_scheme}/${row_impl} IN_LIST quick_references)
        set_target_properties(${target} ${target}.objects PROPERTIES EXCLUDE_FROM_ALL TRUE)
      endif()
    endif()
  endforeach()
endfunction()

# Bring your own implementation: an image from any directory with the pqm4/NIST signature API,
# without a catalogue row.
#   pqscope_add_impl_dir(<dir> [SCHEME <name>] [IMPL <name>] [STACK_BYTES <n>] [KEY_SLOTS <n>]
#                        [NAMESPACE <prefix>] [SYMMETRIC <names...>] [LIBRARIES <libs...>]
#                        [DEFINES <defs...>])
# STACK_BYTES (the link-time stack reserve) defaults to 16384; KEY_SLOTS, the key pairs its key pool
# holds, to as many as fit the pool (at least two); the rest as pqscope_impl_dir_arguments reads them. Creates image.<scheme>.<impl> -> <build>/images/<scheme>/<impl>.elf (its INFO record
# reports the sizes) and, with PQSCOPE_EXTRA_PROBES set, image.<scheme>.<impl>.probed (pqscope_add_image).
function(pqscope_add_impl_dir dir)
  cmake_parse_arguments(arg "" "STACK_BYTES;KEY_SLOTS" "" ${ARGN})
  if(NOT arg_STACK_BYTES)
    set(arg_STACK_BYTES 16384)
  endif()
  set(key_slots "")
  if(arg_KEY_SLOTS)
    set(key_slots DEFINES PQSCOPE_KEY_SLOTS=${arg_KEY_SLOTS})
  endif()
  pqscope_impl_dir_arguments(arguments ${dir} ${arg_UNPARSED_ARGUMENTS} ${key_slots})
  if(NOT arguments)
    message(FATAL_ERROR "${dir}: no api.h declaring crypto_sign_keypair(...), not an implementation of the "
      "pqm4/NIST signature API")
  endif()
  pqscope_add_image(${arguments} STACK_BYTES ${arg_STACK_BYTES})
endfunction()

# The build arguments (pqscope_add_scheme_objects') of a directory with the pqm4/NIST signature
# API, or none when it has no api.h declaring crypto_sign_keypair:
#   pqscope_impl_dir_arguments(<out> <dir> [SCHEME <name>] [IMPL <name>] [NAMESPACE <prefix>]
#                              [SYMMETRIC <names...>] [LIBRARIES <libs...>] [DEFINES <defs...>])
# SCHEME and IMPL default to the names of the directory's parent and of the directory (pqm4's
# crypto_sign/<scheme>/<impl> layout); SYMMETRIC to fips202, sha2 and aes (pqm4's, which MAYO and
# UOV call; unused primitives are dropped by the linker), less each one whose file (fips202.c,
# sha2.c, aes.c) the directory brings itself, as an implementation pinned to older symmetric code
# does. The API is read off api.h: crypto_sign_signature declared -> "signature", else
# crypto_sign/crypto_sign_open; NAMESPACE, unless given, is the prefix api.h puts before
# crypto_sign_keypair (PQClean's PQCLEAN_<SCHEME>_<IMPL>_, none for pqm4's).
function(pqscope_impl_dir_arguments out dir)
  cmake_parse_arguments(arg "" "SCHEME;IMPL;NAMESPACE" "SYMMETRIC;LIBRARIES;DEFINES" ${ARGN})
  set(${out} "" PARENT_SCOPE)
  get_filename_component(dir ${dir} ABSOLUTE)
  if(NOT EXISTS ${dir}/api.h)
    return()
  endif()
  get_filename_component(parent ${dir} DIRECTORY)
  if(NOT arg_SCHEME)
    get_filename_component(arg_SCHEME ${parent} NAME)
  endif()
  if(NOT arg_IMPL)
    get_filename_component(arg_IMPL ${dir} NAME)
  endif()
  if(NOT DEFINED arg_SYMMETRIC AND NOT "SYMMETRIC" IN_LIST ARGN)
    foreach(primitive fips202 sha2 aes)
      if(NOT EXISTS ${dir}/${primitive}.c)
        list(APPEND arg_SYMMETRIC ${primitive})
      endif()
    endforeach()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dir}/api.h)
  # The defines pqm4 gives the implementation (config.mk: "elf/<name>_%.elf: CPPFLAGS += -DMAYO_M4").
  if(EXISTS ${dir}/config.mk)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dir}/config.mk)
    file(STRINGS ${dir}/config.mk flags REGEX "CPPFLAGS[ \t]*\\+=")
    string(REGEX MATCHALL "-D[^ \t]+" config_defines "${flags}")
    list(TRANSFORM config_defines REPLACE "^-D" "")
    list(APPEND arg_DEFINES ${config_defines})
  endif()
  file(READ ${dir}/api.h api_text)
  # The headers of the directory that api.h includes: some declare the API there (HAETAE's sign.h).
  string(REGEX MATCHALL "#include[ \t]+\"[^\"]+\"" includes "${api_text}")
  foreach(include ${includes})
    string(REGEX REPLACE "^[^\"]*\"([^\"]+)\"$" "\\1" header "${include}")
    if(EXISTS ${dir}/${header})
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dir}/${header})
      file(READ ${dir}/${header} header_text)
      string(APPEND api_text "${header_text}")
    endif()
  endforeach()
  string(FIND "${api_text}" "crypto_sign_signature" at)
  if(at EQUAL -1)
    set(api signed-message)
  else()
    set(api signature)
  endif()
  if(NOT DEFINED arg_NAMESPACE)
    string(REGEX MATCH "([A-Za-z0-9_]*)crypto_sign_keypair[ \t]*\\(" declaration "${api_text}")
    if(NOT declaration)
      return()
    endif()
    set(arg_NAMESPACE "${CMAKE_MATCH_1}")
  endif()
  set(${out} SCHEME ${arg_SCHEME} IMPL ${arg_IMPL} SOURCE_DIR ${dir} API ${api} NAMESPACE "${arg_NAMESPACE}"
    SYMMETRIC ${arg_SYMMETRIC} LIBRARIES ${arg_LIBRARIES} DEFINES ${arg_DEFINES} PARENT_SCOPE)
endfunction()
