/* The build id (pqscope/harness.h), compiled apart so that a new commit recompiles nothing else. */
#include <pqscope/harness.h>

#ifndef PQSCOPE_BUILD_ID
#define PQSCOPE_BUILD_ID "unknown"
#endif

const char pqs_build_id[PQS_BUILD_ID_BYTES] = PQSCOPE_BUILD_ID;
