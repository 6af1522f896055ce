# Mbed TLS (pinned in firmware/cmake/dependencies.cmake) for the ECDSA and RSA baselines: only the
# library sources the adapters in this folder need, configured by pqscope_mbedtls_config.h.
# Rows use it with "libraries": ["pqscope_mbedtls"].
FetchContent_MakeAvailable(mbedtls)
add_library(pqscope_mbedtls INTERFACE)
set(PQSCOPE_MBEDTLS_SOURCES
  asn1parse.c asn1write.c bignum.c bignum_core.c constant_time.c ecdsa.c ecp.c ecp_curves.c md.c
  memory_buffer_alloc.c oid.c platform.c platform_util.c rsa.c rsa_alt_helpers.c sha256.c)
list(TRANSFORM PQSCOPE_MBEDTLS_SOURCES PREPEND ${mbedtls_SOURCE_DIR}/library/)
target_sources(pqscope_mbedtls INTERFACE ${PQSCOPE_MBEDTLS_SOURCES}
  ${CMAKE_CURRENT_LIST_DIR}/mbedtls_support.c)
target_include_directories(pqscope_mbedtls INTERFACE ${CMAKE_CURRENT_LIST_DIR}
  ${mbedtls_SOURCE_DIR}/include ${mbedtls_SOURCE_DIR}/library)
target_compile_definitions(pqscope_mbedtls INTERFACE
  MBEDTLS_CONFIG_FILE="pqscope_mbedtls_config.h")
