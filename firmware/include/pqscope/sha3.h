/* SHA3-256 (FIPS 202), incremental: the transcript digest of a sample (PROTOCOL.md, DIGEST).
 * The harness's own small Keccak, independent of the implementation under test. */
#ifndef PQSCOPE_SHA3_H
#define PQSCOPE_SHA3_H

#include <stddef.h>
#include <stdint.h>

#define PQS_SHA3_256_BYTES 32

struct pqs_sha3 {
  uint64_t state[25];
  size_t absorbed; /* bytes of the current block already xored in */
};

void pqs_sha3_256_init(struct pqs_sha3 *ctx);
void pqs_sha3_256_absorb(struct pqs_sha3 *ctx, const uint8_t *data, size_t len);
void pqs_sha3_256_final(struct pqs_sha3 *ctx, uint8_t out[PQS_SHA3_256_BYTES]);

#endif
