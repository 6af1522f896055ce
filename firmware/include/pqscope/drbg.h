/* Deterministic random bit generator: the ChaCha20 keystream (RFC 8439 block function) keyed by a
 * 32-byte seed sent by the host. Every random byte an implementation draws comes from here, so a
 * sample is replayed exactly from its seed. Not for production keys: for reproducible measurement. */
#ifndef PQSCOPE_DRBG_H
#define PQSCOPE_DRBG_H

#include <stddef.h>
#include <stdint.h>

#define PQS_DRBG_SEED_BYTES 32

/* One ChaCha20 block: key (8 words), input words 12..15 (counter and nonce), 64 output bytes. */
void pqs_chacha20_block(const uint32_t key[8], const uint32_t counter_nonce[4], uint8_t out[64]);

struct pqs_drbg {
  uint32_t key[8];
  uint64_t block_counter;
  uint8_t block[64];
  size_t block_used;
};

void pqs_drbg_seed(struct pqs_drbg *drbg, const uint8_t seed[PQS_DRBG_SEED_BYTES]);
void pqs_drbg_generate(struct pqs_drbg *drbg, uint8_t *out, size_t n);

/* The generator behind randombytes(). */
extern struct pqs_drbg pqs_global_drbg;

#endif
