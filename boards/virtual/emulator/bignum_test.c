/* The host's Montgomery multiplication against arithmetic on 128-bit integers: X R = A B (mod N)
 * and X < N, for one and two limbs, with X the same array as A. */
#include "bignum.h"
#include "check.h"

#include <string.h>

typedef unsigned __int128 u128;

/* -N^-1 mod 2^32 (N odd), by Newton's iteration. */
static uint32_t minus_inverse(uint32_t n)
{
	uint32_t x = n; /* right to 3 bits for odd n */
	for (int i = 0; i < 4; i++)
		x *= 2 - n * x;
	return 0u - x;
}

static uint64_t value(const uint32_t *limbs, size_t n)
{
	return n == 1 ? limbs[0] : (uint64_t)limbs[1] << 32 | limbs[0];
}

static void check(const uint32_t *A, const uint32_t *B, const uint32_t *N, size_t limbs, int alias)
{
	uint32_t X[2], T[5], a[2];
	memcpy(a, A, limbs * sizeof *a);
	uint32_t *x = alias ? a : X;
	montmul(x, a, B, limbs, N, limbs, minus_inverse(N[0]), T);
	u128 n = value(N, limbs), r = (u128)1 << (32 * limbs);
	CHECK(value(x, limbs) < n);
	CHECK((u128)value(x, limbs) % n * (r % n) % n == (u128)value(A, limbs) * value(B, limbs) % n);
}

int main(void)
{
	const uint32_t N1[1] = {0xfffffffbu}, A1[1] = {0x12345678u}, B1[1] = {0xfffffff0u};
	check(A1, B1, N1, 1, 0);
	check(A1, B1, N1, 1, 1);
	const uint32_t N2[2] = {0x00000001u, 0xc0000000u}, A2[2] = {0xdeadbeefu, 0xbfffffffu},
		       B2[2] = {0xffffffffu, 0xbfffffffu};
	check(A2, B2, N2, 2, 0);
	check(A2, B2, N2, 2, 1);
	check(B2, B2, N2, 2, 1);
	return check_summary("bignum");
}
