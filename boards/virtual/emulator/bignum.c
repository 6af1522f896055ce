#include "bignum.h"

#include <string.h>

/* d += s b over d_len limbs (s_len of s, the carry through the rest); the carry out. */
static uint32_t multiply_add(uint32_t *d, size_t d_len, const uint32_t *s, size_t s_len, uint32_t b)
{
	uint32_t carry = 0;
	if (d_len < s_len)
		s_len = d_len;
	for (size_t i = 0; i < s_len; i++) {
		uint64_t t = (uint64_t)s[i] * b + d[i] + carry;
		d[i] = (uint32_t)t;
		carry = (uint32_t)(t >> 32);
	}
	for (size_t i = s_len; i < d_len; i++) {
		d[i] += carry;
		carry = d[i] < carry;
	}
	return carry;
}

/* X = A - B over `limbs`; the borrow out. */
static uint32_t subtract(uint32_t *X, const uint32_t *A, const uint32_t *B, size_t limbs)
{
	uint32_t borrow = 0;
	for (size_t i = 0; i < limbs; i++) {
		uint32_t z = A[i] < borrow, t = A[i] - borrow;
		borrow = (t < B[i]) + z;
		X[i] = t - B[i];
	}
	return borrow;
}

void montmul(uint32_t *X, const uint32_t *A, const uint32_t *B, size_t B_limbs, const uint32_t *N,
	     size_t AN_limbs, uint32_t mm, uint32_t *T)
{
	memset(T, 0, (2 * AN_limbs + 1) * sizeof *T);
	for (size_t i = 0; i < AN_limbs; i++, T++) { /* T = (T + u0 B + u1 N) / 2^32 */
		uint32_t u0 = A[i], u1 = (T[0] + u0 * B[0]) * mm;
		multiply_add(T, AN_limbs + 2, B, B_limbs, u0);
		multiply_add(T, AN_limbs + 2, N, AN_limbs, u1);
	}
	uint32_t carry = T[AN_limbs], borrow = subtract(X, T, N, AN_limbs);
	if (carry ^ borrow) /* T < N: T itself */
		memcpy(X, T, AN_limbs * sizeof *X);
}
