/* A deliberately insecure toy signature with the NIST API, to test that pqscope builds and runs
 * any such directory (pqscope_add_impl_dir): the public key *is* the secret key and a signature is
 * SHA3-256(key || message), a MAC. Anyone holding the public key can forge. */
#ifndef TOY_SIGNATURE_API_H
#define TOY_SIGNATURE_API_H

#include <stddef.h>
#include <stdint.h>

#define CRYPTO_PUBLICKEYBYTES 32
#define CRYPTO_SECRETKEYBYTES 32
#define CRYPTO_BYTES 32
#define CRYPTO_ALGNAME "toy-mac (insecure)"

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk);
int crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                       const uint8_t *pk);

#endif
