/* The board's access rules and what its devices share: clock gates, unsupported registers and
 * accesses, the cycle counters' jitter. */
#include "check.h"
#include "fake_core.h"

#define USART2_SR 0x40004400u
#define GPIOA_MODER 0x40020000u
#define STK_CSR 0xe000e010u
#define STK_RVR 0xe000e014u
#define STK_CVR 0xe000e018u
#define CSR_ENABLE (1u << 0)
#define CSR_CLKSOURCE (1u << 2)
#define SCB_SHCSR 0xe000ed24u
#define SCB_DEMCR 0xe000edfcu
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL 0xe0001000u
#define DWT_CYCCNT 0xe0001004u

/* A stand-in board's noise: every counter read is late by 0..max cycles, drawn afresh each time,
 * never more, and not always the same. */
static void test_cycle_jitter_makes_each_counter_read_late_by_at_most_its_maximum(void)
{
	struct board *b = new_board("", false);
	cycle_jitter_set(&b->jitter, 16, 7);
	write_at(b, 0, STK_RVR, 999999);
	write_at(b, 0, STK_CSR, CSR_ENABLE | CSR_CLKSOURCE);
	write_at(b, 0, SCB_DEMCR, DEMCR_TRCENA);
	write_at(b, 0, DWT_CTRL, 1);
	bool late[17] = {false};
	for (uint64_t now = 1000; now < 1000 + 400 * 10; now += 10) {
		uint32_t systick_late = 999999 - (uint32_t)((now - 1) % 1000000) - read_at(b, now, STK_CVR);
		uint32_t cyccnt_late = read_at(b, now, DWT_CYCCNT) - (uint32_t)now;
		CHECK(systick_late <= 16 && cyccnt_late <= 16);
		late[systick_late <= 16 ? systick_late : 0] = true;
	}
	unsigned seen = 0;
	for (int i = 0; i <= 16; i++)
		seen += late[i];
	CHECK(seen > 10); /* 400 draws of 17 values */
	board_free(b);
}

static void test_an_unclocked_peripheral_fails_naming_its_enable_bit(void)
{
	struct board *b = new_board("x", false);
	(void)read_at(b, 0, USART2_SR);
	CHECK(!strcmp(fake.failure, "access to USART2 with its clock disabled (RCC USART2EN=0) at "
				    "address 0x40004400"));
	board_free(b);

	b = new_board("", false);
	write_at(b, 0, GPIOA_MODER, 0);
	CHECK(!strcmp(fake.failure, "access to GPIOA with its clock disabled (RCC GPIOAEN=0) at "
				    "address 0x40020000"));
	memset(fake.failure, 0, sizeof fake.failure);
	write_at(b, 0, RCC_BASE + RCC_AHB1ENR, 1);
	write_at(b, 0, GPIOA_MODER, 0x5);
	CHECK(read_at(b, 0, GPIOA_MODER) == 0x5 && !fake.failure[0]);
	board_free(b);
}

static void test_an_unsupported_register_fails_with_its_address(void)
{
	struct board *b = new_board("", false);
	write_at(b, 0, SCB_SHCSR, 0);
	CHECK(!strcmp(fake.failure, "write to unsupported register SCS+0xd24 at address 0xe000ed24"));
	board_free(b);

	b = new_board("", false);
	(void)read_at(b, 0, 0x40023900);
	CHECK(!strcmp(fake.failure, "read from unsupported register RCC+0x100 at address 0x40023900"));
	board_free(b);

	b = new_board("", false);
	fake.now = 0;
	(void)board_read(b, DWT_CYCCNT, 2);
	CHECK(!strcmp(fake.failure, "2-byte read from DWT+0x004 (only aligned 32-bit accesses are "
				    "supported) at address 0xe0001004"));
	board_free(b);
}

int main(void)
{
	test_cycle_jitter_makes_each_counter_read_late_by_at_most_its_maximum();
	test_an_unclocked_peripheral_fails_naming_its_enable_bit();
	test_an_unsupported_register_fails_with_its_address();
	return check_summary("board tests");
}
