#include "api.h"

#include <pqscope/guard.h>
#include <pqscope/hal.h>
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

/* A byte flipped, so that it differs from whatever the harness put there. noinline: the error
 * names the function that wrote, this one. */
static __attribute__((noinline)) void flip(volatile uint8_t *buffer, ptrdiff_t offset)
{
  buffer[offset] ^= 0xFF;
}

/* Frames of 64 bytes, each filled, down to 32 bytes below the stack's limit (the end of .bss). */
static __attribute__((noinline)) uint32_t descend(void)
{
  volatile uint8_t frame[64];
  for (size_t i = 0; i < sizeof frame; i++) {
    frame[i] = (uint8_t)i;
  }
  if ((uintptr_t)frame > (uintptr_t)__pqscope_stack_limit - 32) {
    return descend() + frame[1];
  }
  return frame[1];
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
  if (mlen == SIGNING_FAILS) {
    return -1;
  }
  if (mlen == STACK_OVERFLOWS) {
    descend();
  }
  tag(sig, sk, m, mlen);
  *siglen = CRYPTO_BYTES;
  if (mlen >= PAST_SIGNATURE_FIRST && mlen <= PAST_SIGNATURE_LAST) {
    flip(sig, CRYPTO_BYTES + (ptrdiff_t)mlen - 1);
  } else if (mlen == INTO_COUNTERS) {
    /* The wrap count's address, reached from sig as a stray index would (past every guard). */
    const volatile uint8_t *wraps = (const volatile uint8_t *)&pqs_state.counter_wraps;
    flip(sig, wraps + 2 - sig);
  }
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
  if (mlen >= PAST_PUBLIC_KEY_FIRST && mlen <= PAST_PUBLIC_KEY_LAST) {
    flip((uint8_t *)pk, CRYPTO_PUBLICKEYBYTES + (ptrdiff_t)mlen - PAST_PUBLIC_KEY_FIRST);
  }
  return siglen == CRYPTO_BYTES && difference == 0 ? 0 : -1;
}
