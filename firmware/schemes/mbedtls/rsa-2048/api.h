/* RSA-2048, e = 65537, PKCS#1 v1.5 signatures with SHA-256 (RSASSA-PKCS1-v1_5, Mbed TLS), behind
 * the NIST signature API. Fixed-size big-endian encodings:
 *   pk = N (256) || E (4)
 *   sk = N (256) || E (4) || D (256) || P || Q || DP || DQ || QP (128 each): the CRT key, so that
 *        signing does not recompute it
 *   signature = 256 bytes */
#ifndef PQSCOPE_RSA_2048_API_H
#define PQSCOPE_RSA_2048_API_H

#include <stddef.h>
#include <stdint.h>

#define CRYPTO_PUBLICKEYBYTES (256 + 4)
#define CRYPTO_SECRETKEYBYTES (256 + 4 + 256 + 5 * 128)
#define CRYPTO_BYTES 256
#define CRYPTO_ALGNAME "RSA-2048-PKCS1v15-SHA256"

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk);
int crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                       const uint8_t *pk);

#endif
