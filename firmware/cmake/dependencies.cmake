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

# pqm4 at its tag Round3: the Falcon (round 3) Cortex-M4 implementation crypto_sign/falcon-*/m4-ct,
# which pqm4 HEAD no longer has. It needs only a FIPS 202 API and randombytes(), which the
# cc2c1b9 pieces provide with the same signatures, so no submodules.
FetchContent_Declare(pqm4_round3
  GIT_REPOSITORY https://github.com/mupq/pqm4
  GIT_TAG Round3
  GIT_SUBMODULES ""
  SOURCE_SUBDIR no-cmake-project)

# Mbed TLS v3.6.5 (LTS): ECDSA P-256 and RSA-2048 baselines. Only the library sources the adapters
# need are compiled (firmware/schemes/mbedtls/mbedtls.cmake); its framework submodule holds build
# and test scripts only, so it is not fetched.
FetchContent_Declare(mbedtls
  GIT_REPOSITORY https://github.com/Mbed-TLS/mbedtls
  GIT_TAG v3.6.5
  GIT_SUBMODULES ""
  SOURCE_SUBDIR no-cmake-project)
