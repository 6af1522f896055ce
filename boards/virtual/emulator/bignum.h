/* mbedtls's Montgomery multiplication (library/bignum_core.c, v3.6.5) on the host, with 32-bit
 * limbs as the M4 keeps them: the result and the temporary it leaves the same as the M4 code's, so
 * that native_calls.c can run the emulated function's calls with it. RSA's key generation spends
 * 86 % of its cycles in it (2048 bits: 5.3 of 6.1 G, 0.3 M calls). */
#ifndef VBOARD_BIGNUM_H
#define VBOARD_BIGNUM_H

#include <stddef.h>
#include <stdint.h>

/* X = A B / R mod N (R = 2^(32 AN_limbs)), as mbedtls_mpi_core_montmul: T (2 AN_limbs + 1 limbs)
 * is its scratch and keeps what the computation left in it; X may be A or B. */
void montmul(uint32_t *X, const uint32_t *A, const uint32_t *B, size_t B_limbs, const uint32_t *N,
	     size_t AN_limbs, uint32_t mm, uint32_t *T);

#endif
