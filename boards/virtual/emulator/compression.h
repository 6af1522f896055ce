/* The SHA-256 and SHA-512 compression functions (FIPS 180-4, sections 6.2.2 and 6.4.2) on the
 * host, on the state as the M4 code keeps it in memory: its words big-endian (PQClean's and pqm4's
 * crypto_hashblocks, slhdsa-c's sha2_*_compress). native_calls.c runs the emulated functions'
 * calls with them. */
#ifndef VBOARD_COMPRESSION_H
#define VBOARD_COMPRESSION_H

#include <stdint.h>

#define SHA256_STATE_BYTES 32u
#define SHA256_BLOCK_BYTES 64u
#define SHA512_STATE_BYTES 64u
#define SHA512_BLOCK_BYTES 128u

/* The state compressed with each of `blocks` consecutive message blocks at `in`. */
void sha256_blocks(uint8_t state[SHA256_STATE_BYTES], const uint8_t *in, uint32_t blocks);
void sha512_blocks(uint8_t state[SHA512_STATE_BYTES], const uint8_t *in, uint32_t blocks);

#endif
