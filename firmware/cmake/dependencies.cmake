# Third-party code: upstream URL + pin, fetched at configure time, never committed.
# Offline or local copies: -DFETCHCONTENT_SOURCE_DIR_<NAME>=/path (NAME upper-case, e.g. PQM4),
# or point git at a mirror with `git config --global url.<mirror>.insteadOf https://github.com/...`.
include(FetchContent)

# FetchContent_Declare that also records the pin for the build's metadata (build-info.json).
function(pqscope_declare_dependency name)
  cmake_parse_arguments(arg "" "GIT_REPOSITORY;GIT_TAG" "" ${ARGN})
  FetchContent_Declare(${name} ${ARGN})
  set_property(GLOBAL APPEND PROPERTY PQSCOPE_DEPENDENCY_PINS
    "\"${name}\": {\"url\": \"${arg_GIT_REPOSITORY}\", \"pin\": \"${arg_GIT_TAG}\"}")
endfunction()

# pqm4 at HEAD cc2c1b9: ML-DSA, FN-DSA, common/ assembly (Keccak), hal ideas. Its submodules pin
# mupq (ddcccedb, with PQClean inside) and libopencm3 (1f3abd43), which we use as pinned there.
pqscope_declare_dependency(pqm4
  GIT_REPOSITORY https://github.com/mupq/pqm4
  GIT_TAG cc2c1b992b602d285bd15991a566d5f17b34c1fa
  GIT_SUBMODULES mupq libopencm3
  GIT_SUBMODULES_RECURSE ON
  SOURCE_SUBDIR no-cmake-project)

# Unity v2.6.1: C unit tests on the host and on boards (output through UNITY_OUTPUT_CHAR).
pqscope_declare_dependency(unity
  GIT_REPOSITORY https://github.com/ThrowTheSwitch/Unity
  GIT_TAG v2.6.1
  GIT_SHALLOW ON
  SOURCE_SUBDIR no-cmake-project)

# pqm4 at its tag Round3: the Falcon (round 3) Cortex-M4 implementation crypto_sign/falcon-*/m4-ct,
# which pqm4 HEAD no longer has. It needs only a FIPS 202 API and randombytes(), which the
# cc2c1b9 pieces provide with the same signatures, so no submodules.
pqscope_declare_dependency(pqm4_round3
  GIT_REPOSITORY https://github.com/mupq/pqm4
  GIT_TAG Round3
  GIT_SUBMODULES ""
  SOURCE_SUBDIR no-cmake-project)

# Mbed TLS v3.6.5 (LTS): ECDSA P-256 and RSA-2048 baselines. Only the library sources the adapters
# need are compiled (firmware/schemes/mbedtls/mbedtls.cmake); its framework submodule holds build
# and test scripts only, so it is not fetched.
pqscope_declare_dependency(mbedtls
  GIT_REPOSITORY https://github.com/Mbed-TLS/mbedtls
  GIT_TAG v3.6.5
  GIT_SUBMODULES ""
  SOURCE_SUBDIR no-cmake-project)

# slhdsa-c at 9694008: SLH-DSA (FIPS 205), all 12 parameter sets in one portable C library with
# its own SHA-2 and SHA-3. Only its top-level sources are compiled, behind the adapter in
# firmware/schemes/slhdsa (catalogue rows slh-dsa-*).
pqscope_declare_dependency(slhdsa_c
  GIT_REPOSITORY https://github.com/pq-code-package/slhdsa-c
  GIT_TAG 9694008585f0e92f0c18d3819e4a052780c85c18
  GIT_SUBMODULES ""
  SOURCE_SUBDIR no-cmake-project)
