# Third-party code: upstream URL + pin, fetched at configure time, never committed.
# Offline or local copies: -DFETCHCONTENT_SOURCE_DIR_<NAME>=/path (NAME upper-case, e.g. PQM4),
# or point git at a mirror with `git config --global url.<mirror>.insteadOf https://github.com/...`.
include(FetchContent)

# pqm4 at HEAD cc2c1b9: ML-DSA, FN-DSA, common/ assembly (Keccak), hal ideas. Its submodules pin
# mupq (ddcccedb, with PQClean inside) and libopencm3 (1f3abd43), which we use as pinned there.
FetchContent_Declare(pqm4
  GIT_REPOSITORY https://github.com/mupq/pqm4
  GIT_TAG cc2c1b992b602d285bd15991a566d5f17b34c1fa
  GIT_SUBMODULES mupq libopencm3
  GIT_SUBMODULES_RECURSE ON
  SOURCE_SUBDIR no-cmake-project)

# Unity v2.6.1: C unit tests on the host and on boards (output through UNITY_OUTPUT_CHAR).
FetchContent_Declare(unity
  GIT_REPOSITORY https://github.com/ThrowTheSwitch/Unity
  GIT_TAG v2.6.1
  GIT_SHALLOW ON
  SOURCE_SUBDIR no-cmake-project)
