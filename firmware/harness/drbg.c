#include <pqscope/drbg.h>

struct pqs_drbg pqs_global_drbg;

static uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static uint32_t load_le32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define QUARTER_ROUND(a, b, c, d)                                                                  \
  do {                                                                                             \
    a += b; d ^= a; d = rotl(d, 16);                                                               \
    c += d; b ^= c; b = rotl(b, 12);                                                               \
    a += b; d ^= a; d = rotl(d, 8);                                                                \
    c += d; b ^= c; b = rotl(b, 7);                                                                \
  } while (0)

void pqs_chacha20_block(const uint32_t key[8], const uint32_t counter_nonce[4], uint8_t out[64])
{
  /* "expand 32-byte k" */
  uint32_t input[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
  for (int i = 0; i < 8; i++) {
    input[4 + i] = key[i];
  }
  for (int i = 0; i < 4; i++) {
    input[12 + i] = counter_nonce[i];
  }
  uint32_t x[16];
  for (int i = 0; i < 16; i++) {
    x[i] = input[i];
  }
  for (int round = 0; round < 10; round++) {
    QUARTER_ROUND(x[0], x[4], x[8], x[12]);
    QUARTER_ROUND(x[1], x[5], x[9], x[13]);
    QUARTER_ROUND(x[2], x[6], x[10], x[14]);
    QUARTER_ROUND(x[3], x[7], x[11], x[15]);
    QUARTER_ROUND(x[0], x[5], x[10], x[15]);
    QUARTER_ROUND(x[1], x[6], x[11], x[12]);
    QUARTER_ROUND(x[2], x[7], x[8], x[13]);
    QUARTER_ROUND(x[3], x[4], x[9], x[14]);
  }
  for (int i = 0; i < 16; i++) {
    uint32_t v = x[i] + input[i];
    out[4 * i + 0] = (uint8_t)v;
    out[4 * i + 1] = (uint8_t)(v >> 8);
    out[4 * i + 2] = (uint8_t)(v >> 16);
    out[4 * i + 3] = (uint8_t)(v >> 24);
  }
}

void pqs_drbg_seed(struct pqs_drbg *drbg, const uint8_t seed[PQS_DRBG_SEED_BYTES])
{
  for (int i = 0; i < 8; i++) {
    drbg->key[i] = load_le32(seed + 4 * i);
  }
  drbg->block_counter = 0;
  drbg->block_used = sizeof drbg->block;
}

void pqs_drbg_generate(struct pqs_drbg *drbg, uint8_t *out, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    if (drbg->block_used == sizeof drbg->block) {
      /* 64-bit block counter in words 12..13, zero nonce: the original ChaCha layout. */
      const uint32_t counter_nonce[4] = {(uint32_t)drbg->block_counter,
                                         (uint32_t)(drbg->block_counter >> 32), 0, 0};
      pqs_chacha20_block(drbg->key, counter_nonce, drbg->block);
      drbg->block_counter++;
      drbg->block_used = 0;
    }
    out[i] = drbg->block[drbg->block_used++];
  }
}
