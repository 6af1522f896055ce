# Board-independent pieces of the harness: built into every image, unit-tested on the host and on
# the (virtual) board.
include_guard(GLOBAL)
set(PQSCOPE_FIRMWARE_DIR ${CMAKE_CURRENT_LIST_DIR}/..)
add_library(pqscope_harness_core INTERFACE)
target_sources(pqscope_harness_core INTERFACE
  ${PQSCOPE_FIRMWARE_DIR}/harness/frame.c
  ${PQSCOPE_FIRMWARE_DIR}/harness/drbg.c
  ${PQSCOPE_FIRMWARE_DIR}/harness/fault.c
  ${PQSCOPE_FIRMWARE_DIR}/harness/sha3.c
  ${PQSCOPE_FIRMWARE_DIR}/harness/stackmeter.c
  ${PQSCOPE_FIRMWARE_DIR}/harness/taint.c)
target_include_directories(pqscope_harness_core INTERFACE ${PQSCOPE_FIRMWARE_DIR}/include)
