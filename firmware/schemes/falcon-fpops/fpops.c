/* One Falcon FP primitive, chosen by the catalogue row: FPOPS_OP_ADD, FPOPS_OP_MUL, FPOPS_OP_DIV,
 * FPOPS_OP_SQRT, FPOPS_OP_RINT or FPOPS_OP_FLOOR. The FP mode is Falcon's own (FALCON_FPNATIVE or
 * FALCON_FPEMU with FALCON_ASM_CORTEXM4), so the primitive is exactly what Falcon's signing runs:
 * libgcc/libm soft-float on doubles, Falcon's C emulation, or its Cortex-M4 assembly. */
#include "api.h"

#include <string.h>

#include "inner.h"
#include "randombytes.h"

#if defined(FPOPS_OP_ADD) + defined(FPOPS_OP_MUL) + defined(FPOPS_OP_DIV) + defined(FPOPS_OP_SQRT) + \
    defined(FPOPS_OP_RINT) + defined(FPOPS_OP_FLOOR) != 1
#error "define exactly one of FPOPS_OP_ADD, FPOPS_OP_MUL, FPOPS_OP_DIV, FPOPS_OP_SQRT, FPOPS_OP_RINT, FPOPS_OP_FLOOR"
#endif

/* Operations per signature: the host tool divides signing cycles by this (FP_OP_REPS in
 * host-tools/src/pqscope/falcon_compare.py). Each operand pair is used REPS / PAIRS times. */
#define FPOPS_REPS 64

/* Operands are spread over 2^-EXPONENT_SPREAD .. 2^EXPONENT_SPREAD: exponent differences (which
 * decide soft-float's alignment shifts) and results with and without a fractional part (which
 * decide rint/floor's paths) both occur, as they do in Falcon's FFT and sampler. */
#define EXPONENT_SPREAD 16
#define EXPONENT_BIAS 1023
#define MANTISSA_MASK ((UINT64_C(1) << 52) - 1)

/* Only sqrt needs non-negative operands; the others take either sign. */
#if defined(FPOPS_OP_SQRT)
#define OPERANDS_NON_NEGATIVE 1
#else
#define OPERANDS_NON_NEGATIVE 0
#endif

static uint64_t load64(const uint8_t *p)
{
  uint64_t value = 0;
  for (int i = 7; i >= 0; i--) {
    value = value << 8 | p[i];
  }
  return value;
}

static void store64(uint8_t *p, uint64_t value)
{
  for (int i = 0; i < 8; i++) {
    p[i] = (uint8_t)(value >> (8 * i));
  }
}

/* Every mode stores an fpr as IEEE-754 binary64: the emulation as its bit pattern, native mode as
 * a double. */
static fpr fpr_from_bits(uint64_t bits)
{
#if FALCON_FPEMU
  return bits;
#else
  fpr x;
  memcpy(&x.v, &bits, sizeof bits);
  return x;
#endif
}

static uint64_t bits_of_fpr(fpr x)
{
#if FALCON_FPEMU
  return x;
#else
  uint64_t bits;
  memcpy(&bits, &x.v, sizeof bits);
  return bits;
#endif
}

/* A normal binary64 operand from 64 random bits: random sign (unless non-negative operands are
 * needed), random 52-bit mantissa, exponent within the spread. */
static uint64_t shape_operand(uint64_t random)
{
  uint64_t sign = OPERANDS_NON_NEGATIVE ? 0 : random >> 63;
  uint64_t exponent = EXPONENT_BIAS - EXPONENT_SPREAD + ((random >> 52) & 0x7FF) % (2 * EXPONENT_SPREAD + 1);
  return sign << 63 | exponent << 52 | (random & MANTISSA_MASK);
}

/* noipa: the compiler must neither inline the primitive into the loop nor, knowing it is pure,
 * merge or hoist the calls on repeated operands; every call is one timed operation. */
static __attribute__((noipa)) uint64_t operation(fpr x, fpr y)
{
#if defined(FPOPS_OP_ADD)
  return bits_of_fpr(fpr_add(x, y));
#elif defined(FPOPS_OP_MUL)
  return bits_of_fpr(fpr_mul(x, y));
#elif defined(FPOPS_OP_DIV)
  return bits_of_fpr(fpr_div(x, y));
#elif defined(FPOPS_OP_SQRT)
  (void)y;
  return bits_of_fpr(fpr_sqrt(x));
#elif defined(FPOPS_OP_RINT)
  (void)y;
  return (uint64_t)fpr_rint(x);
#else
  (void)y;
  return (uint64_t)fpr_floor(x);
#endif
}

/* The operation on the key's operand pairs, REPS times, folded into 64 bits. */
static void results_digest(uint8_t out[CRYPTO_BYTES], const uint8_t *key)
{
  fpr x[FPOPS_OPERAND_PAIRS], y[FPOPS_OPERAND_PAIRS];
  for (int i = 0; i < FPOPS_OPERAND_PAIRS; i++) {
    x[i] = fpr_from_bits(load64(key + 16 * i));
    y[i] = fpr_from_bits(load64(key + 16 * i + 8));
  }
  uint64_t digest = 0;
  for (int i = 0; i < FPOPS_REPS; i++) {
    digest = (digest << 1 | digest >> 63) ^ operation(x[i % FPOPS_OPERAND_PAIRS], y[i % FPOPS_OPERAND_PAIRS]);
  }
  store64(out, digest);
}

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk)
{
  randombytes(sk, CRYPTO_SECRETKEYBYTES);
  for (int i = 0; i < CRYPTO_SECRETKEYBYTES; i += 8) {
    store64(sk + i, shape_operand(load64(sk + i)));
  }
  memcpy(pk, sk, CRYPTO_PUBLICKEYBYTES);
  return 0;
}

int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk)
{
  (void)m;
  (void)mlen;
  results_digest(sig, sk);
  *siglen = CRYPTO_BYTES;
  return 0;
}

int crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                       const uint8_t *pk)
{
  uint8_t expected[CRYPTO_BYTES];
  uint8_t difference = 0;
  (void)m;
  (void)mlen;
  results_digest(expected, pk);
  for (int i = 0; i < CRYPTO_BYTES; i++) {
    difference |= (uint8_t)(expected[i] ^ sig[i]);
  }
  return siglen == CRYPTO_BYTES && difference == 0 ? 0 : -1;
}
