/* Keccak-f[1600] (FIPS 202, section 3) on the host, in the two state layouts the M4 code keeps:
 * 25 little-endian 64-bit lanes (C implementations: PQClean's, slhdsa-c's) and pqm4's
 * bit-interleaved words (common/keccakf1600.S: lane i as word 2i, its even bits, and word 2i+1,
 * its odd bits). native_calls.c runs the emulated permutation's calls with them. */
#ifndef VBOARD_PERMUTATION_H
#define VBOARD_PERMUTATION_H

#include <stdint.h>

#define KECCAK_STATE_BYTES 200u

/* The permutation of a state of 200 bytes as the Cortex-M4 (little-endian) holds it in memory. */
void keccak_f1600_lanes(uint8_t state[KECCAK_STATE_BYTES]);
void keccak_f1600_interleaved(uint8_t state[KECCAK_STATE_BYTES]);

#endif
