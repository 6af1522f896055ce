/* The pattern is chosen by the catalogue row: CONTROL_EARLY_EXIT, CONTROL_BRANCH, CONTROL_UDIV,
 * CONTROL_WIDE_SHIFT, CONTROL_FLASH_TABLE, CONTROL_DERIVED_NONCE, CONTROL_RANDOM_NONCE,
 * CONTROL_NONCE_DIVISION, CONTROL_CANCELLING_BOUNDS or CONTROL_PUBLIC_SEED, with CONTROL_LEAKY 1
 * (the textbook leak; CONTROL_WIDE_SHIFT's is the compiler's) or 0 (its constant-time twin). */
#include "api.h"

#include <pqscope/sha3.h>

#include "randombytes.h"

#if !defined(CONTROL_LEAKY) || (defined(CONTROL_EARLY_EXIT) + defined(CONTROL_BRANCH) + defined(CONTROL_UDIV) + \
                                defined(CONTROL_WIDE_SHIFT) + defined(CONTROL_FLASH_TABLE) +                    \
                                defined(CONTROL_DERIVED_NONCE) + defined(CONTROL_RANDOM_NONCE) +                \
                                defined(CONTROL_NONCE_DIVISION) + defined(CONTROL_CANCELLING_BOUNDS) +          \
                                defined(CONTROL_PUBLIC_SEED) != 1)
#error "define CONTROL_LEAKY and exactly one of the patterns above"
#endif

#define KEY_LIMIT 0xEFu /* early exit at the first key byte above this */
#define DIVISIONS 8

static uint32_t load32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#if defined(CONTROL_UDIV) || defined(CONTROL_WIDE_SHIFT)
/* The words these patterns work on: public, from the message alone. */
static void message_digest(uint8_t digest[PQS_SHA3_256_BYTES], const uint8_t *m, size_t mlen)
{
  struct pqs_sha3 ctx;
  pqs_sha3_256_init(&ctx);
  pqs_sha3_256_absorb(&ctx, m, mlen);
  pqs_sha3_256_final(&ctx, digest);
}
#endif

#if defined(CONTROL_UDIV) || defined(CONTROL_NONCE_DIVISION)
#if CONTROL_LEAKY
/* The Cortex-M4's UDIV terminates early: its time depends on the operands. */
static uint32_t divide(uint32_t n, uint32_t d)
{
  return n / d;
}
#else
/* Restoring division with a fixed 32 steps and no branches on the operands. */
static uint32_t divide(uint32_t n, uint32_t d)
{
  uint32_t quotient = 0;
  uint64_t remainder = 0; /* below 2d: 33 bits */
  for (int bit = 31; bit >= 0; bit--) {
    remainder = (remainder << 1) | ((n >> bit) & 1u);
    uint32_t fits = 1u ^ (uint32_t)((remainder - d) >> 63); /* 1 if remainder >= d */
    remainder -= (uint64_t)d & (0u - (uint64_t)fits);
    quotient |= fits << bit;
  }
  return quotient;
}
#endif
#endif

#if defined(CONTROL_EARLY_EXIT)
/* The index of the first key byte above KEY_LIMIT (or the key length): a compare that returns
 * as soon as it has its answer takes time proportional to a secret. */
static __attribute__((noinline)) uint32_t key_dependent_value(const uint8_t *sk, const uint8_t *m, size_t mlen)
{
  (void)m;
  (void)mlen;
#if CONTROL_LEAKY
  for (uint32_t i = 0; i < CRYPTO_SECRETKEYBYTES; i++) {
    if (sk[i] > KEY_LIMIT) {
      return i;
    }
  }
  return CRYPTO_SECRETKEYBYTES;
#else
  uint32_t index = CRYPTO_SECRETKEYBYTES;
  uint32_t found = 0;
  for (uint32_t i = 0; i < CRYPTO_SECRETKEYBYTES; i++) {
    uint32_t above = (KEY_LIMIT - (uint32_t)sk[i]) >> 31; /* 1 if sk[i] > KEY_LIMIT */
    uint32_t first = above & ~found;
    index ^= (index ^ i) & (0u - first);
    found |= above;
  }
  return index;
#endif
}

#elif defined(CONTROL_BRANCH)
/* Extra work only for keys with their lowest bit set: a branch on a secret. */
static uint32_t extra_work(const uint8_t *sk, const uint8_t *m, size_t mlen)
{
  uint8_t digest[PQS_SHA3_256_BYTES];
  struct pqs_sha3 ctx;
  pqs_sha3_256_init(&ctx);
  pqs_sha3_256_absorb(&ctx, m, mlen);
  pqs_sha3_256_absorb(&ctx, sk, CRYPTO_SECRETKEYBYTES);
  pqs_sha3_256_final(&ctx, digest);
  return load32(digest);
}

static __attribute__((noinline)) uint32_t key_dependent_value(const uint8_t *sk, const uint8_t *m, size_t mlen)
{
#if CONTROL_LEAKY
  return (sk[0] & 1) ? extra_work(sk, m, mlen) : 0;
#else
  uint32_t mask = 0u - (uint32_t)(sk[0] & 1);
  return extra_work(sk, m, mlen) & mask;
#endif
}

#elif defined(CONTROL_UDIV)
/* Message words divided by key-derived divisors. */
static __attribute__((noinline)) uint32_t key_dependent_value(const uint8_t *sk, const uint8_t *m, size_t mlen)
{
  uint8_t digest[PQS_SHA3_256_BYTES];
  message_digest(digest, m, mlen);
  uint32_t value = 0;
  for (int i = 0; i < DIVISIONS; i++) {
    uint32_t divisor = (load32(sk + 4 * i) >> (sk[i] & 31)) | 1u;
    value += divide(load32(digest + 4 * (i % 8)), divisor);
  }
  return value;
}

#elif defined(CONTROL_WIDE_SHIFT)
/* The message's 64-bit words shifted right as signed values by key-derived counts of 0 to 63: C
 * without a branch, which GCC at -O0 compiles into one (its generic 64-bit arithmetic shift tests
 * the count against 32: `subs; bmi`), while its optimised builds and clang at every level make IT
 * selects. A leak only a compiler makes, for `pqscope matrix`; Falcon's fpr_irsh has the same
 * branch at -O0, but masks its count below 32, so there it always goes one way. The twin shifts
 * with 32-bit operations and masks, which no compiler needs a branch for. */
#define SHIFTS (PQS_SHA3_256_BYTES / 8)
#if CONTROL_LEAKY
static int64_t shift_right(int64_t x, uint32_t count)
{
  return x >> count;
}
#else
static int64_t shift_right(int64_t x, uint32_t count)
{
  uint32_t low = (uint32_t)x;
  uint32_t high = (uint32_t)((uint64_t)x >> 32);
  uint32_t by_word = 0u - (count >> 5); /* all ones for counts from 32 */
  low = (low & ~by_word) | (high & by_word);
  high = (high & ~by_word) | ((uint32_t)((int32_t)high >> 31) & by_word);
  count &= 31;
  low = (low >> count) | ((high << 1) << (31 - count)); /* in two steps: a count of 0 moves no bit in */
  high = (uint32_t)((int32_t)high >> count);
  return (int64_t)((uint64_t)high << 32 | low);
}
#endif

static __attribute__((noinline)) uint32_t key_dependent_value(const uint8_t *sk, const uint8_t *m, size_t mlen)
{
  uint8_t digest[PQS_SHA3_256_BYTES];
  message_digest(digest, m, mlen);
  uint32_t value = 0;
  for (int i = 0; i < SHIFTS; i++) {
    int64_t word = (int64_t)((uint64_t)load32(digest + 8 * i + 4) << 32 | load32(digest + 8 * i));
    uint64_t shifted = (uint64_t)shift_right(word, sk[i] & 63u);
    value = value * 31u + (uint32_t)shifted + (uint32_t)(shifted >> 32);
  }
  return value;
}

#elif defined(CONTROL_FLASH_TABLE)
/* A key-indexed lookup in a constant table of 256 bytes (16 flash lines of 128 bits). With 0 wait
 * states (24 MHz) every flash read costs the same, so neither twin leaks there. At 168 MHz a flash
 * read costs 5 wait states unless the ART's data cache (8 lines of 128 bits, RM0090 3.5.2) holds
 * its line: which lines the key's bytes select, and so the time, depends on the key. The twin
 * copies the whole table to SRAM first (the same reads for every key) and looks up there, where
 * every read costs the same at any clock. */
#define ENTRY(i) (uint8_t)(((i) * 167u + 13u) ^ ((i) >> 3))
#define ENTRIES4(i) ENTRY(i), ENTRY((i) + 1), ENTRY((i) + 2), ENTRY((i) + 3)
#define ENTRIES16(i) ENTRIES4(i), ENTRIES4((i) + 4), ENTRIES4((i) + 8), ENTRIES4((i) + 12)
#define ENTRIES64(i) ENTRIES16(i), ENTRIES16((i) + 16), ENTRIES16((i) + 32), ENTRIES16((i) + 48)
static const uint8_t TABLE[256] = {ENTRIES64(0), ENTRIES64(64), ENTRIES64(128), ENTRIES64(192)};

/* Public work whose amount varies from message to message, as a real scheme's rejection loop's
 * does: the message's hash is hashed again until its first byte is below 64 (a quarter of the
 * time), at most 16 times. A board's total time varies with it by far more than the key's table
 * lookups move it; the catalogue declares it public (the virtual board books its time apart). */
#define PUBLIC_ACCEPT_BELOW 64u
#define PUBLIC_MOST_ATTEMPTS 16
static volatile uint8_t public_sink;

static __attribute__((noinline)) void public_attempts(const uint8_t *m, size_t mlen)
{
  uint8_t digest[PQS_SHA3_256_BYTES];
  const uint8_t *input = m;
  size_t input_len = mlen;
  for (int attempt = 0; attempt < PUBLIC_MOST_ATTEMPTS; attempt++) {
    struct pqs_sha3 ctx;
    pqs_sha3_256_init(&ctx);
    pqs_sha3_256_absorb(&ctx, input, input_len);
    pqs_sha3_256_final(&ctx, digest);
    if (digest[0] < PUBLIC_ACCEPT_BELOW) {
      break;
    }
    input = digest;
    input_len = sizeof digest;
  }
  public_sink = digest[0];
}

static __attribute__((noinline)) uint32_t key_dependent_value(const uint8_t *sk, const uint8_t *m, size_t mlen)
{
  public_attempts(m, mlen);
#if CONTROL_LEAKY
  const uint8_t *table = TABLE;
#else
  uint8_t table[sizeof TABLE];
  for (size_t i = 0; i < sizeof TABLE; i++) {
    table[i] = TABLE[i];
  }
#endif
  uint32_t value = 0;
  for (uint32_t i = 0; i < CRYPTO_SECRETKEYBYTES; i++) {
    value = value * 31u + table[sk[i]];
  }
  return value;
}

#elif defined(CONTROL_CANCELLING_BOUNDS)
/* A loop from one key-derived value to another (issue #54), as an optimised loop counts with
 * `p - i` and stops at `p - n` for a secret p: both operands of its exit branch are secret, so the
 * exact check's taint convicts the branch, but in the twin the bounds differ by a public count
 * and the branch goes the same way for every key. In the leaky one their difference is secret too:
 * the number of rounds, and the time, follow the key. The end comes from a function the compiler
 * cannot see through, so it cannot count the rounds with a public counter instead. */
#define ROUNDS 24u
#define SECRET_EXTRA_ROUNDS(sk) (CONTROL_LEAKY ? (uint32_t)((sk)[1] & 15u) : 0u)

static __attribute__((noipa)) uint32_t loop_end(uint32_t start, uint32_t rounds)
{
  return start + rounds;
}

static __attribute__((noinline)) uint32_t key_dependent_value(const uint8_t *sk, const uint8_t *m, size_t mlen)
{
  uint32_t start = load32(sk);
  uint32_t end = loop_end(start, ROUNDS + SECRET_EXTRA_ROUNDS(sk));
  (void)m;
  (void)mlen;
  uint32_t value = 0;
  for (uint32_t i = start; i != end; i++) {
    value = value * 33u + i;
  }
  return value;
}

#elif defined(CONTROL_PUBLIC_SEED)
/* A secret key that carries a public seed, as ML-DSA's carries rho (issue #54): its first
 * SEED_BYTES are the seed, published (the catalogue declares them public), the rest is secret.
 * Signing expands the seed by rejection sampling, as ML-DSA expands its matrix: the seed is hashed
 * again until the hash's first byte is below EXPANSION_ACCEPT_BELOW, so the time follows the seed,
 * and the random-key class, which draws whole keys, varies it. Nothing of that is secret. The
 * leaky twin expands the secret part instead: the same loop, its time the secret's. */
#define SEED_BYTES 16u
#define EXPANSION_ACCEPT_BELOW 64u
#define EXPANSION_MOST_ATTEMPTS 16

static __attribute__((noinline)) uint32_t expand_by_rejection(const uint8_t *seed)
{
  uint8_t digest[PQS_SHA3_256_BYTES];
  const uint8_t *input = seed;
  size_t input_len = SEED_BYTES;
  for (int attempt = 0; attempt < EXPANSION_MOST_ATTEMPTS; attempt++) {
    struct pqs_sha3 ctx;
    pqs_sha3_256_init(&ctx);
    pqs_sha3_256_absorb(&ctx, input, input_len);
    pqs_sha3_256_final(&ctx, digest);
    if (digest[0] < EXPANSION_ACCEPT_BELOW) {
      break;
    }
    input = digest;
    input_len = sizeof digest;
  }
  return load32(digest);
}

static __attribute__((noinline)) uint32_t key_dependent_value(const uint8_t *sk, const uint8_t *m, size_t mlen)
{
  (void)m;
  (void)mlen;
  uint32_t expanded = expand_by_rejection(CONTROL_LEAKY ? sk + SEED_BYTES : sk);
  return expanded ^ load32(sk + SEED_BYTES);
}

#elif defined(CONTROL_DERIVED_NONCE) || defined(CONTROL_RANDOM_NONCE) || defined(CONTROL_NONCE_DIVISION)
#if defined(CONTROL_NONCE_DIVISION)
/* Work on a per-signature nonce: a value derived from it divided by a public modulus that the
 * compiler cannot turn into a multiplication (KyberSlash's leak: UDIV's time follows its
 * operands). The twin divides in fixed steps. */
static volatile uint32_t modulus = 3329;

static uint32_t nonce_work(uint32_t nonce)
{
  return divide(nonce >> (nonce & 31), modulus);
}
#else
/* Work on a per-signature nonce whose time follows its bit length (Minerva's leak). The twin
 * walks all 32 bits. */
static uint32_t nonce_work(uint32_t nonce)
{
  uint32_t value = 0;
#if CONTROL_LEAKY
  for (uint32_t rest = nonce; rest != 0; rest >>= 1) { /* one step per bit up to the highest set */
    value = value * 33u + (rest & 1u);
  }
#else
  for (int bit = 0; bit < 32; bit++) {
    value = value * 33u + ((nonce >> bit) & 1u);
  }
#endif
  return value;
}
#endif

#if defined(CONTROL_DERIVED_NONCE)
/* The nonce derived from the key and the message, as deterministic ECDSA and EdDSA derive theirs.
 * Both key classes sign fresh messages, so the nonce is uniform in each: the fixed-vs-random-key
 * statistics cannot see it, by construction; the exact check follows the key into it. */
static __attribute__((noinline)) uint32_t key_dependent_value(const uint8_t *sk, const uint8_t *m, size_t mlen)
{
  uint8_t digest[PQS_SHA3_256_BYTES];
  struct pqs_sha3 ctx;
  pqs_sha3_256_init(&ctx);
  pqs_sha3_256_absorb(&ctx, sk, CRYPTO_SECRETKEYBYTES);
  pqs_sha3_256_absorb(&ctx, m, mlen);
  pqs_sha3_256_final(&ctx, digest);
  return nonce_work(load32(digest));
}
#else
/* The nonce drawn from randombytes during signing, as randomized ECDSA draws its k. Its work
 * would go into the signature (r = [k]G); here it goes to a sink instead, so that the signature
 * stays a function of the key and the message that verification can recompute. */
static volatile uint32_t nonce_sink;

static __attribute__((noinline)) uint32_t key_dependent_value(const uint8_t *sk, const uint8_t *m, size_t mlen)
{
  (void)sk;
  (void)m;
  (void)mlen;
  uint8_t nonce[4];
  randombytes(nonce, sizeof nonce);
  nonce_sink = nonce_work(load32(nonce));
  return 0;
}
#endif
#endif

static void tag(uint8_t out[CRYPTO_BYTES], const uint8_t *key, const uint8_t *m, size_t mlen)
{
  uint32_t v = key_dependent_value(key, m, mlen);
  uint8_t v_bytes[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  struct pqs_sha3 ctx;
  pqs_sha3_256_init(&ctx);
  pqs_sha3_256_absorb(&ctx, key, CRYPTO_SECRETKEYBYTES);
  pqs_sha3_256_absorb(&ctx, m, mlen);
  pqs_sha3_256_absorb(&ctx, v_bytes, sizeof v_bytes);
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
