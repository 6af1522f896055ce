/* Controls for the constant-time test (pqscope ct): tiny signatures with a known timing leak and
 * their constant-time twins. Deliberately insecure: the public key is the secret key and a
 * signature is SHA3-256(key || message || v), where v is computed from the key (and message) by
 * the pattern under test, leakily or in constant time. Twins give identical signatures. */
#ifndef PQSCOPE_CONTROLS_API_H
#define PQSCOPE_CONTROLS_API_H

#include <stddef.h>
#include <stdint.h>

#define CRYPTO_PUBLICKEYBYTES 32
#define CRYPTO_SECRETKEYBYTES 32
#define CRYPTO_BYTES 32
#define CRYPTO_ALGNAME "pqscope timing control (insecure)"

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk);
int crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                       const uint8_t *pk);

#endif
