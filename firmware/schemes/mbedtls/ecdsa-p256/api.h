/* ECDSA over NIST P-256 with SHA-256 (Mbed TLS), behind the NIST signature API.
 * Fixed-size encodings: pk = uncompressed point 0x04||X||Y, sk = the scalar d (big-endian),
 * signature = r||s (big-endian, 32 bytes each). */
#ifndef PQSCOPE_ECDSA_P256_API_H
#define PQSCOPE_ECDSA_P256_API_H

#include <stddef.h>
#include <stdint.h>

#define CRYPTO_PUBLICKEYBYTES 65
#define CRYPTO_SECRETKEYBYTES 32
#define CRYPTO_BYTES 64
#define CRYPTO_ALGNAME "ECDSA-P256-SHA256"

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk);
int crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                       const uint8_t *pk);

#endif
