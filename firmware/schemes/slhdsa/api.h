/* SLH-DSA (FIPS 205) from pq-code-package/slhdsa-c behind the NIST signature API: pure SLH-DSA
 * with an empty context. The row's defines choose the parameter set and the signing mode:
 *   PQSCOPE_SLHDSA_HASH           sha2 or shake
 *   PQSCOPE_SLHDSA_SET            128s, 128f, 192s, 192f, 256s or 256f
 *   PQSCOPE_SLHDSA_DETERMINISTIC  if defined, FIPS 205's deterministic variant (opt_rand = PK.seed);
 *                                 otherwise the hedged one, opt_rand = n bytes of randombytes()
 * Keys are FIPS 205's encodings: pk = PK.seed || PK.root, sk = SK.seed || SK.prf || pk. */
#ifndef PQSCOPE_SLHDSA_API_H
#define PQSCOPE_SLHDSA_API_H

#include <stddef.h>
#include <stdint.h>

#define PQS_SLHDSA_PASTE(a, b) a##b
#define PQS_SLHDSA_EXPAND_PASTE(a, b) PQS_SLHDSA_PASTE(a, b)
#define PQS_SLHDSA_OF_SET(table) PQS_SLHDSA_EXPAND_PASTE(table, PQSCOPE_SLHDSA_SET)

/* n (bytes of a hash value) and the signature's size per parameter set (FIPS 205, Table 2). */
#define PQS_SLHDSA_N_128s 16
#define PQS_SLHDSA_N_128f 16
#define PQS_SLHDSA_N_192s 24
#define PQS_SLHDSA_N_192f 24
#define PQS_SLHDSA_N_256s 32
#define PQS_SLHDSA_N_256f 32
#define PQS_SLHDSA_SIG_128s 7856
#define PQS_SLHDSA_SIG_128f 17088
#define PQS_SLHDSA_SIG_192s 16224
#define PQS_SLHDSA_SIG_192f 35664
#define PQS_SLHDSA_SIG_256s 29792
#define PQS_SLHDSA_SIG_256f 49856

#define PQS_SLHDSA_N PQS_SLHDSA_OF_SET(PQS_SLHDSA_N_)
#define CRYPTO_PUBLICKEYBYTES (2 * PQS_SLHDSA_N)
#define CRYPTO_SECRETKEYBYTES (4 * PQS_SLHDSA_N)
#define CRYPTO_BYTES PQS_SLHDSA_OF_SET(PQS_SLHDSA_SIG_)

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk);
int crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                       const uint8_t *pk);

#endif
