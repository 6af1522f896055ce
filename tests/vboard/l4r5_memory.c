/* The STM32L4R5's memory map and identifiers as the emulator's --chip stm32l4r5 gives them: SRAM2
 * one memory at 0x10000000 and 0x20030000, SRAM3 to 0x2009ffff, the flash size register, the
 * DBGMCU identifier, the RNG on HSI48 (board_l4r5.c turns it on). */
#include "board.h"

#define SRAM2_AT_0x10 ((volatile uint32_t *)0x10000100)
#define SRAM2_AT_0x2003 ((volatile uint32_t *)0x20030100)
#define SRAM3_LAST ((volatile uint32_t *)0x2009fffc)
#define FLASH_SIZE_KIB (*(volatile uint16_t *)0x1fff75e0)
#define DBGMCU_IDCODE MMIO32(0xe0042000)
#define RCC_AHB2ENR MMIO32(0x4002104c)
#define RNG_CR MMIO32(0x50060800)
#define RNG_SR MMIO32(0x50060804)
#define RNG_DR MMIO32(0x50060808)

static int failures;

static void check(int ok, const char *what)
{
	if (!ok) {
		put_str("FAIL ");
		put_str(what);
		put_char('\n');
		failures++;
	}
}

static uint32_t random_word(void)
{
	while (!(RNG_SR & 1u))
		;
	return RNG_DR;
}

int main(void)
{
	board_setup();
	*SRAM2_AT_0x10 = 0x5a5a1234u;
	check(*SRAM2_AT_0x2003 == 0x5a5a1234u, "sram2 store at 0x10000100 read at 0x20030100");
	*SRAM2_AT_0x2003 = 0x0badf00du;
	check(*SRAM2_AT_0x10 == 0x0badf00du, "sram2 store at 0x20030100 read at 0x10000100");
	*SRAM3_LAST = 0xc0ffee00u;
	check(*SRAM3_LAST == 0xc0ffee00u, "sram3 last word");
	check(FLASH_SIZE_KIB == 2048, "flash size 2048 KiB");
	check((DBGMCU_IDCODE & 0xfffu) == 0x470u, "DBGMCU DEV_ID 0x470");
	RCC_AHB2ENR |= 1u << 18; /* RNG */
	RNG_CR |= 1u << 2;
	check(random_word() != random_word(), "two random words");
	put_str(failures ? "L4R5 MEMORY: failed\n" : "L4R5 MEMORY: all passed\n");
	return 0;
}
