/* The RNG. */
#include "check.h"
#include "fake_core.h"

#define RNG_CR 0x50060800u
#define RNG_SR 0x50060804u
#define RNG_DR 0x50060808u

/* The RNG (pqm4's images): clocked by RNGEN, nothing ready until enabled, then a number at every
 * read, each new; its interrupt is refused. */
static void test_the_rng_gives_numbers_once_clocked_and_enabled(void)
{
	struct board *b = new_board("", false);
	read_at(b, 0, RNG_SR);
	CHECK(!strcmp(fake.failure, "access to RNG with its clock disabled (RCC RNGEN=0) at address 0x50060804"));
	board_free(b);

	b = new_board("", false);
	write_at(b, 0, RCC_BASE + RCC_AHB2ENR, 1u << 6);
	CHECK(read_at(b, 0, RNG_SR) == 0);
	write_at(b, 0, RNG_CR, 1u << 2);
	uint32_t numbers[8];
	for (int i = 0; i < 8; i++) {
		CHECK(read_at(b, 0, RNG_SR) == 1u);
		numbers[i] = read_at(b, 0, RNG_DR);
		for (int j = 0; j < i; j++)
			CHECK(numbers[j] != numbers[i]);
	}
	CHECK(!fake.failure[0]);
	write_at(b, 0, RNG_CR, 3u << 2);
	CHECK(!strcmp(fake.failure, "RNG interrupts are not emulated (RNG_CR=0x0000000c) at address 0x50060800"));
	board_free(b);
}

int main(void)
{
	test_the_rng_gives_numbers_once_clocked_and_enabled();
	return check_summary("RNG tests");
}
