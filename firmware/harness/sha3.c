#include <pqscope/sha3.h>

#include <string.h>

#define RATE_BYTES 136 /* 1600 - 2 * 256 bits */

static const uint64_t round_constants[24] = {
  0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808Aull, 0x8000000080008000ull,
  0x000000000000808Bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull,
  0x000000000000008Aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000Aull,
  0x000000008000808Bull, 0x800000000000008Bull, 0x8000000000008089ull, 0x8000000000008003ull,
  0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800Aull, 0x800000008000000Aull,
  0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull,
};

/* rho rotation offsets and pi lane order, walked along the (x, y) -> (y, 2x + 3y) cycle. */
static const uint8_t rho_offsets[24] = {1,  3,  6,  10, 15, 21, 28, 36, 45, 55, 2,  14,
                                        27, 41, 56, 8,  25, 43, 62, 18, 39, 61, 20, 44};
static const uint8_t pi_lanes[24] = {10, 7,  11, 17, 18, 3, 5,  16, 8,  21, 24, 4,
                                     15, 23, 19, 13, 12, 2, 20, 14, 22, 9,  6,  1};

static uint64_t rotl64(uint64_t x, unsigned n) { return (x << n) | (x >> (64 - n)); }

static void keccak_f1600(uint64_t a[25])
{
  for (int round = 0; round < 24; round++) {
    uint64_t c[5];
    for (int x = 0; x < 5; x++) {
      c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
    }
    for (int x = 0; x < 5; x++) {
      uint64_t d = c[(x + 4) % 5] ^ rotl64(c[(x + 1) % 5], 1);
      for (int y = 0; y < 25; y += 5) {
        a[y + x] ^= d;
      }
    }
    uint64_t carried = a[1];
    for (int i = 0; i < 24; i++) {
      uint64_t next = a[pi_lanes[i]];
      a[pi_lanes[i]] = rotl64(carried, rho_offsets[i]);
      carried = next;
    }
    for (int y = 0; y < 25; y += 5) {
      uint64_t row[5];
      memcpy(row, &a[y], sizeof row);
      for (int x = 0; x < 5; x++) {
        a[y + x] = row[x] ^ (~row[(x + 1) % 5] & row[(x + 2) % 5]);
      }
    }
    a[0] ^= round_constants[round];
  }
}

static void xor_byte(uint64_t state[25], size_t pos, uint8_t byte)
{
  state[pos / 8] ^= (uint64_t)byte << (8 * (pos % 8));
}

void pqs_sha3_256_init(struct pqs_sha3 *ctx)
{
  memset(ctx, 0, sizeof *ctx);
}

void pqs_sha3_256_absorb(struct pqs_sha3 *ctx, const uint8_t *data, size_t len)
{
  for (size_t i = 0; i < len; i++) {
    xor_byte(ctx->state, ctx->absorbed++, data[i]);
    if (ctx->absorbed == RATE_BYTES) {
      keccak_f1600(ctx->state);
      ctx->absorbed = 0;
    }
  }
}

void pqs_sha3_256_final(struct pqs_sha3 *ctx, uint8_t out[PQS_SHA3_256_BYTES])
{
  /* SHA-3 domain separation 01, then pad10*1. */
  xor_byte(ctx->state, ctx->absorbed, 0x06);
  xor_byte(ctx->state, RATE_BYTES - 1, 0x80);
  keccak_f1600(ctx->state);
  for (size_t i = 0; i < PQS_SHA3_256_BYTES; i++) {
    out[i] = (uint8_t)(ctx->state[i / 8] >> (8 * (i % 8)));
  }
}
