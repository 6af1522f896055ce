/* Falcon floating-point microbenchmarks for the constant-time test (pqscope ct): one of Falcon's
 * FP primitives (add, mul, div, sqrt, rint, floor), compiled from Falcon round 3's own fpr.h/fpr.c
 * in the row's FP mode, run REPS times per "signature".
 *
 * Deliberately insecure, not a signature scheme: the secret key *is* the operands (so the
 * fixed-vs-random key test becomes a fixed-vs-random operand test), the public key is a copy of
 * the secret key, and a "signature" is a 64-bit digest of the results, which anyone holding the
 * public key recomputes. The message is ignored: it must not change which operands are used. */
#ifndef PQSCOPE_FALCON_FPOPS_API_H
#define PQSCOPE_FALCON_FPOPS_API_H

#include <stddef.h>
#include <stdint.h>

#define FPOPS_OPERAND_PAIRS 8
#define CRYPTO_SECRETKEYBYTES (FPOPS_OPERAND_PAIRS * 16)
#define CRYPTO_PUBLICKEYBYTES CRYPTO_SECRETKEYBYTES
#define CRYPTO_BYTES 8
#define CRYPTO_ALGNAME "pqscope Falcon FP-operation benchmark (insecure)"

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk);
int crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                       const uint8_t *pk);

#endif
