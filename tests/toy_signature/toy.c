#include "api.h"

#include <pqscope/sha3.h>

#include "randombytes.h"

static void tag(uint8_t out[CRYPTO_BYTES], const uint8_t key[32], const uint8_t *m, size_t mlen)
{
  struct pqs_sha3 ctx;
  pqs_sha3_256_init(&ctx);
  pqs_sha3_256_absorb(&ctx, key, 32);
  pqs_sha3_256_absorb(&ctx, m, mlen);
  pqs_sha3_256_final(&ctx, out);
}

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk)
{
  randombytes(sk, CRYPTO_SECRETKEYBYTES);
  for (size_t i = 0; i < CRYPTO_PUBLICKEYBYTES; i++) {
    pk[i] = sk[i];
  }
  return 0;
}

int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk)
{
  tag(sig, sk, m, mlen);
  *siglen = CRYPTO_BYTES;
  return 0;
}

int crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                       const uint8_t *pk)
{
  uint8_t expected[CRYPTO_BYTES];
  uint8_t difference = 0;
  tag(expected, pk, m, mlen);
  for (size_t i = 0; i < CRYPTO_BYTES; i++) {
    difference |= (uint8_t)(expected[i] ^ sig[i]);
  }
  return siglen == CRYPTO_BYTES && difference == 0 ? 0 : -1;
}
