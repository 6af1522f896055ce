#include "api.h"

#include <pqscope/sha3.h>

#include <string.h>

#include "randombytes.h"

#ifndef TOY_CHECKED_FROM
#define TOY_CHECKED_FROM 0 /* the first byte of the tag crypto_sign_open compares */
#endif
#define TAG_BYTES 32

static void tag(uint8_t out[TAG_BYTES], const uint8_t key[32], const uint8_t *m, size_t mlen)
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
  memcpy(pk, sk, CRYPTO_PUBLICKEYBYTES);
  return 0;
}

int crypto_sign(uint8_t *sm, size_t *smlen, const uint8_t *m, size_t mlen, const uint8_t *sk)
{
  memmove(sm, m, mlen);
  tag(sm + mlen, sk, m, mlen);
  memset(sm + mlen + TAG_BYTES, 0, CRYPTO_BYTES - TAG_BYTES);
  *smlen = mlen + CRYPTO_BYTES;
  return 0;
}

int crypto_sign_open(uint8_t *m, size_t *mlen, const uint8_t *sm, size_t smlen, const uint8_t *pk)
{
  uint8_t expected[TAG_BYTES];
  uint8_t difference = 0;
  if (smlen < CRYPTO_BYTES) {
    return -1;
  }
  *mlen = smlen - CRYPTO_BYTES;
  memmove(m, sm, *mlen);
  tag(expected, pk, m, *mlen);
  for (size_t i = TOY_CHECKED_FROM; i < TAG_BYTES; i++) {
    difference |= (uint8_t)(expected[i] ^ sm[*mlen + i]);
  }
  return difference == 0 ? 0 : -1;
}
