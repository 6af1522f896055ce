/* Secret-taint tracking (pqscope-vboard --taint) on functions that each show one kind of finding,
 * or none: vboard_taint_check.cmake runs this image with --taint-function taint_scope and checks
 * every finding against the function (ELF symbols) or the instruction (taint_cases.S's expect_*
 * labels) where it must be, and that the constant-time functions and the SysTick handler have
 * none. taint_scope runs twice: the second call starts clean (the marks are made once), so each
 * finding of the first call is counted once. */
#include <stddef.h>
#include <stdint.h>

#include <pqscope/taint.h>

#include "board.h"

#define NOINLINE __attribute__((noinline))
#define CSR_ENABLE 1u
#define CSR_TICKINT 2u
#define CSR_CLKSOURCE 4u

/* taint_cases.S */
uint32_t leak_memory(uint32_t secret, uint32_t *scratch);
uint32_t leak_fpu(uint32_t secret);
uint32_t leak_it(uint32_t secret, const uint32_t *public_word);
uint32_t select_it(uint32_t secret);
uint32_t leak_jump(uint32_t secret);
uint32_t ct_push_pop(uint32_t secret, uint32_t public_value);
uint32_t leak_across_ticks(uint32_t secret, uint32_t iterations);
uint32_t ct_flags(uint32_t secret, const void *public_pointer);
uint32_t leak_flags_overflow(uint32_t secret, const void *public_pointer);

uint8_t key[32];                   /* SECRET */
static uint8_t guess[32];          /* public */
static uint8_t declassified[4];    /* SECRET, then PQS_DECLASSIFY */
static uint8_t challenge_seed[16]; /* SECRET, published: --taint-public-argument publish:0:16 */
static uint32_t sram_table[256];
static const uint32_t flash_table[256] = {1, 2, 3, 5, 8, 13};
static uint32_t scratch;
volatile uint32_t ticks;           /* the SysTick handler's (taint_cases.S) */
volatile uint32_t sink;

/* branch: returns at the first difference */
NOINLINE int leak_early_exit(const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return 1;
	return 0;
}

/* address: a secret index into an SRAM table, then into a flash table */
NOINLINE uint32_t leak_sram_lookup(uint8_t i)
{
	return sram_table[i];
}

NOINLINE uint32_t leak_flash_lookup(uint8_t i)
{
	return flash_table[i];
}

/* division: UDIV's time depends on its operands */
NOINLINE uint32_t leak_division(uint32_t x)
{
	return 1000000u / (x | 1u);
}

/* constant time: no finding */
NOINLINE uint32_t ct_select(uint32_t bit, uint32_t a, uint32_t b)
{
	uint32_t mask = 0u - (bit & 1u);
	return (a & mask) | (b & ~mask);
}

NOINLINE uint32_t ct_compare(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint32_t acc = 0;
	for (size_t i = 0; i < n; i++)
		acc |= (uint32_t)(a[i] ^ b[i]);
	return (0u - acc) >> 31;
}

/* A constant-time workload on the key (ChaCha20 quarter-rounds): propagation speed. */
#define ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#define QR(a, b, c, d)                                                                       \
	(a += b, d ^= a, d = ROTL(d, 16), c += d, b ^= c, b = ROTL(b, 12), a += b, d ^= a,    \
	 d = ROTL(d, 8), c += d, b ^= c, b = ROTL(b, 7))

NOINLINE uint32_t ct_workload(const uint8_t *k, unsigned blocks)
{
	uint32_t x[16], acc = 0;
	for (int i = 0; i < 16; i++)
		x[i] = (uint32_t)k[2 * i] | (uint32_t)k[2 * i + 1] << 8;
	for (unsigned n = 0; n < blocks; n++) {
		for (int r = 0; r < 10; r++) {
			QR(x[0], x[4], x[8], x[12]);
			QR(x[1], x[5], x[9], x[13]);
			QR(x[2], x[6], x[10], x[14]);
			QR(x[3], x[7], x[11], x[15]);
			QR(x[0], x[5], x[10], x[15]);
			QR(x[1], x[6], x[11], x[12]);
			QR(x[2], x[7], x[8], x[13]);
			QR(x[3], x[4], x[9], x[14]);
		}
		acc ^= x[n & 15];
	}
	return acc;
}

/* A declassified value: its branch is reported, as declassified (the read of the volatile sink on
 * one side only keeps it a branch, not a select). */
NOINLINE uint32_t declassified_branch(uint32_t x)
{
	if (x > 100)
		sink = sink * 3 + 1;
	else
		sink = 2;
	return sink;
}

/* --taint-public-return norm_check: the scheme decides on this result in the open. */
NOINLINE uint32_t norm_check(const uint8_t *k)
{
	uint32_t acc = 0;
	for (int i = 0; i < 8; i++)
		acc += k[i];
	return (0u - (acc & 1u)) >> 31;
}

NOINLINE uint32_t check_then_branch(const uint8_t *k)
{
	if (norm_check(k))
		sink++;
	return sink;
}

/* --taint-public-argument publish:0:16: the seed becomes public at this function's entry. */
NOINLINE uint32_t publish(const uint8_t *seed)
{
	if (seed[0] & 1)
		sink++;
	return sink;
}

/* The checked function (--taint-function taint_scope). */
NOINLINE uint32_t taint_scope(void)
{
	uint32_t r = 0;
	r += (uint32_t)leak_early_exit(key, guess, sizeof key);
	r += leak_sram_lookup(key[1]);
	r += leak_flash_lookup(key[1]);
	r += leak_division(key[2]);
	r += leak_memory(key[3], &scratch);
	r += leak_fpu(key[4]);
	r += leak_it(key[5], &scratch);
	r += select_it(key[5]);
	r += leak_jump(key[5]);
	r += leak_across_ticks(key[6], 20000);
	r += ct_select(key[7], 11, 22);
	r += ct_compare(key, guess, sizeof key);
	r += ct_push_pop(key[8], 5);
	r += ct_flags(key[9], &scratch);
	r += leak_flags_overflow(key[10], &scratch);
	r += ct_workload(key, 2000);
	r += declassified_branch(declassified[0]);
	r += check_then_branch(key);
	r += publish(challenge_seed);
	return r;
}

int main(void)
{
	board_setup();
	for (unsigned i = 0; i < sizeof key; i++) {
		key[i] = (uint8_t)(i * 37 + 11);
		guess[i] = key[i];
	}
	guess[31] ^= 1;
	declassified[0] = 200;
	challenge_seed[0] = 3;
	for (unsigned i = 0; i < 256; i++)
		sram_table[i] = i * i;

	STK_RVR = 2000 - 1;
	STK_CVR = 0;
	STK_CSR = CSR_CLKSOURCE | CSR_TICKINT | CSR_ENABLE;

	PQS_SECRET(key, sizeof key);
	PQS_SECRET(declassified, sizeof declassified);
	PQS_DECLASSIFY(declassified, sizeof declassified);
	PQS_SECRET(challenge_seed, sizeof challenge_seed);
	sink = taint_scope();
	sink = taint_scope(); /* starts clean: no finding */
	STK_CSR = 0;

	put_str("TAINT CASES: done, ticks ");
	put_u64(ticks);
	put_str("\n");
	return 0;
}
