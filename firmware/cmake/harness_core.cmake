# Board-independent pieces of the harness: linked into every image, unit-tested on the host and on
# the (virtual) board. Compiled once per tree: they depend on no scheme's definitions.
include_guard(GLOBAL)
set(PQSCOPE_FIRMWARE_DIR ${CMAKE_CURRENT_LIST_DIR}/..)
add_library(pqscope_harness_core STATIC
  ${PQSCOPE_FIRMWARE_DIR}/harness/frame.c
  ${PQSCOPE_FIRMWARE_DIR}/harness/drbg.c
  ${PQSCOPE_FIRMWARE_DIR}/harness/fault.c
  ${PQSCOPE_FIRMWARE_DIR}/harness/guard.c
  ${PQSCOPE_FIRMWARE_DIR}/harness/sha3.c
  ${PQSCOPE_FIRMWARE_DIR}/harness/stackmeter.c
  ${PQSCOPE_FIRMWARE_DIR}/harness/taint.c)
target_include_directories(pqscope_harness_core PUBLIC ${PQSCOPE_FIRMWARE_DIR}/include)
