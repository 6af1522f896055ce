/* Mbed TLS configuration for pqscope's bare-metal baselines (MBEDTLS_CONFIG_FILE): only what
 * ECDSA P-256 and RSA-2048 PKCS#1 v1.5 signatures need. No file system, no clock, no entropy
 * source: the adapters pass a random callback that draws from the harness DRBG (randombytes()),
 * so every sample replays from its seed. The heap is a static buffer (mbedtls_support.c). */
#ifndef PQSCOPE_MBEDTLS_CONFIG_H
#define PQSCOPE_MBEDTLS_CONFIG_H

/* Platform: calloc/free from MBEDTLS_MEMORY_BUFFER_ALLOC_C's static buffer, nothing else. */
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_MEMORY_BUFFER_ALLOC_C
#define MBEDTLS_NO_PLATFORM_ENTROPY

/* Multi-precision integers, with the Thumb-2 DSP multiply-accumulate assembly of bn_mul.h. */
#define MBEDTLS_HAVE_ASM
#define MBEDTLS_BIGNUM_C

/* Hashing the message: SHA-256 through the MD layer (RSA's PKCS#1 v1.5 DigestInfo needs OID). */
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_OID_C

/* ECDSA over P-256 with the NIST fast reduction; the fixed-point comb uses the ROM tables. */
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ASN1_PARSE_C /* required by ECDSA_C, unused: signatures are raw r||s */
#define MBEDTLS_ASN1_WRITE_C

/* RSA with CRT, PKCS#1 v1.5 signatures, key generation. */
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_GENPRIME

#endif
