#include "compression.h"

/* FIPS 180-4, section 4.2.2: the first 32 bits of the fractional parts of the cube roots of the
 * first 64 primes. */
static const uint32_t k256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* Section 4.2.3: the first 64 bits of the fractional parts of the cube roots of the first 80 primes. */
static const uint64_t k512[80] = {
	0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc, 0x3956c25bf348b538,
	0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118, 0xd807aa98a3030242, 0x12835b0145706fbe,
	0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2, 0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235,
	0xc19bf174cf692694, 0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
	0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5, 0x983e5152ee66dfab,
	0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4, 0xc6e00bf33da88fc2, 0xd5a79147930aa725,
	0x06ca6351e003826f, 0x142929670a0e6e70, 0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed,
	0x53380d139d95b3df, 0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
	0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30, 0xd192e819d6ef5218,
	0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8, 0x19a4c116b8d2d0c8, 0x1e376c085141ab53,
	0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8, 0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373,
	0x682e6ff3d6b2b8a3, 0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
	0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b, 0xca273eceea26619c,
	0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178, 0x06f067aa72176fba, 0x0a637dc5a2c898a6,
	0x113f9804bef90dae, 0x1b710b35131c471b, 0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc,
	0x431d67c49c100d4c, 0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
};

static inline uint32_t ror32(uint32_t x, unsigned n)
{
	return x >> n | x << (32 - n);
}

static inline uint64_t ror64(uint64_t x, unsigned n)
{
	return x >> n | x << (64 - n);
}

static uint32_t load32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t load64(const uint8_t *p)
{
	return (uint64_t)load32(p) << 32 | load32(p + 4);
}

static void store32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static void store64(uint8_t *p, uint64_t v)
{
	store32(p, (uint32_t)(v >> 32));
	store32(p + 4, (uint32_t)v);
}

/* One round (FIPS 180-4, 6.2.2 step 3) with the working variables renamed instead of moved:
 * eight rounds take each variable back to its place, so the loop's body is eight rounds, which
 * the compiler keeps in registers (a fifth faster than moving them; the host runs millions of
 * calls a signature). */
#define ROUND256(a, b, c, d, e, f, g, h, t)                                                         \
	do {                                                                                        \
		uint32_t t1 = h + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + ((e & f) ^ (~e & g)) + \
			      k256[t] + w[t];                                                       \
		d += t1;                                                                            \
		h = t1 + (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c)); \
	} while (0)

/* Rounds t to t + 7 of the working variables a..hh, each round's names shifted by one. */
#define EIGHT_ROUNDS(ROUND, t)                             \
	do {                                               \
		ROUND(a, b, c, d, e, f, g, hh, t);         \
		ROUND(hh, a, b, c, d, e, f, g, t + 1);     \
		ROUND(g, hh, a, b, c, d, e, f, t + 2);     \
		ROUND(f, g, hh, a, b, c, d, e, t + 3);     \
		ROUND(e, f, g, hh, a, b, c, d, t + 4);     \
		ROUND(d, e, f, g, hh, a, b, c, t + 5);     \
		ROUND(c, d, e, f, g, hh, a, b, t + 6);     \
		ROUND(b, c, d, e, f, g, hh, a, t + 7);     \
	} while (0)

void sha256_blocks(uint8_t state[SHA256_STATE_BYTES], const uint8_t *in, uint32_t blocks)
{
	uint32_t h[8];
	for (int i = 0; i < 8; i++)
		h[i] = load32(state + 4 * i);
	for (; blocks; blocks--, in += SHA256_BLOCK_BYTES) {
		uint32_t w[64];
		for (int t = 0; t < 16; t++)
			w[t] = load32(in + 4 * t);
		for (int t = 16; t < 64; t++) {
			uint32_t s0 = ror32(w[t - 15], 7) ^ ror32(w[t - 15], 18) ^ w[t - 15] >> 3;
			uint32_t s1 = ror32(w[t - 2], 17) ^ ror32(w[t - 2], 19) ^ w[t - 2] >> 10;
			w[t] = w[t - 16] + s0 + w[t - 7] + s1;
		}
		uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
		for (int t = 0; t < 64; t += 8) {
			EIGHT_ROUNDS(ROUND256, t);
		}
		h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
	}
	for (int i = 0; i < 8; i++)
		store32(state + 4 * i, h[i]);
}

/* Section 6.4.2 step 3, as ROUND256. */
#define ROUND512(a, b, c, d, e, f, g, h, t)                                                         \
	do {                                                                                        \
		uint64_t t1 = h + (ror64(e, 14) ^ ror64(e, 18) ^ ror64(e, 41)) + ((e & f) ^ (~e & g)) + \
			      k512[t] + w[t];                                                       \
		d += t1;                                                                            \
		h = t1 + (ror64(a, 28) ^ ror64(a, 34) ^ ror64(a, 39)) + ((a & b) ^ (a & c) ^ (b & c)); \
	} while (0)

void sha512_blocks(uint8_t state[SHA512_STATE_BYTES], const uint8_t *in, uint32_t blocks)
{
	uint64_t h[8];
	for (int i = 0; i < 8; i++)
		h[i] = load64(state + 8 * i);
	for (; blocks; blocks--, in += SHA512_BLOCK_BYTES) {
		uint64_t w[80];
		for (int t = 0; t < 16; t++)
			w[t] = load64(in + 8 * t);
		for (int t = 16; t < 80; t++) {
			uint64_t s0 = ror64(w[t - 15], 1) ^ ror64(w[t - 15], 8) ^ w[t - 15] >> 7;
			uint64_t s1 = ror64(w[t - 2], 19) ^ ror64(w[t - 2], 61) ^ w[t - 2] >> 6;
			w[t] = w[t - 16] + s0 + w[t - 7] + s1;
		}
		uint64_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
		for (int t = 0; t < 80; t += 8) {
			EIGHT_ROUNDS(ROUND512, t);
		}
		h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
	}
	for (int i = 0; i < 8; i++)
		store64(state + 8 * i, h[i]);
}
