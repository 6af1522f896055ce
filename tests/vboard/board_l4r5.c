/* Just enough of the Nucleo-L4R5ZI for the emulator's test images, as pqm4's hal-opencm3.c brings
 * it up: voltage range 1, HSI16 through the PLL to 20 MHz at 0 wait states with prefetch and both
 * caches on, HSI48 for the RNG, LPUART1 on PG7/PG8 (VDDIO2 valid first), the DWT cycle counter.
 * The print helpers are board.c's, over put_char/get_char. */
#include "board.h"

#define RCC_CR MMIO32(0x40021000)
#define RCC_CFGR MMIO32(0x40021008)
#define RCC_PLLCFGR MMIO32(0x4002100c)
#define RCC_AHB2ENR MMIO32(0x4002104c)
#define RCC_APB1ENR1 MMIO32(0x40021058)
#define RCC_APB1ENR2 MMIO32(0x4002105c)
#define RCC_CRRCR MMIO32(0x40021098)
#define PWR_CR1 MMIO32(0x40007000)
#define PWR_CR2 MMIO32(0x40007004)
#define PWR_SR2 MMIO32(0x40007014)
#define FLASH_ACR MMIO32(0x40022000)
#define GPIOG_MODER MMIO32(0x48001800)
#define GPIOG_AFRL MMIO32(0x48001820)
#define GPIOG_AFRH MMIO32(0x48001824)
#define LPUART1_CR1 MMIO32(0x40008000)
#define LPUART1_BRR MMIO32(0x4000800c)
#define LPUART1_ISR MMIO32(0x4000801c)
#define LPUART1_RDR MMIO32(0x40008024)
#define LPUART1_TDR MMIO32(0x40008028)
#define DEMCR MMIO32(0xe000edfc)
#define DWT_CTRL MMIO32(0xe0001000)

static void clock_setup(void)
{
	RCC_APB1ENR1 |= 1u << 28;                       /* PWR */
	PWR_CR1 = (PWR_CR1 & ~(3u << 9)) | 1u << 9;     /* range 1 */
	while (PWR_SR2 & (1u << 10))                    /* VOSF */
		;
	RCC_CR |= 1u << 8;                              /* HSI16 on */
	while (!(RCC_CR & (1u << 10)))
		;
	RCC_CR &= ~(1u << 24);                          /* PLL off */
	while (RCC_CR & (1u << 25))
		;
	/* HSI16 / M 1 * N 10 / R 8 = 20 MHz */
	RCC_PLLCFGR = 2u | 0u << 4 | 10u << 8 | 1u << 24 | 3u << 25;
	RCC_CR |= 1u << 24;
	while (!(RCC_CR & (1u << 25)))
		;
	FLASH_ACR = (FLASH_ACR & ~0xfu) | 1u << 8 | 1u << 9 | 1u << 10; /* 0 WS, PRFTEN ICEN DCEN */
	RCC_CFGR = (RCC_CFGR & ~3u) | 3u;               /* PLL */
	while (((RCC_CFGR >> 2) & 3u) != 3u)
		;
	RCC_CRRCR |= 1u;                                /* HSI48 on, for the RNG */
	while (!(RCC_CRRCR & 2u))
		;
}

static void uart_setup(void)
{
	RCC_AHB2ENR |= 1u << 6;                         /* GPIOG */
	RCC_APB1ENR2 |= 1u << 0;                        /* LPUART1 */
	PWR_CR2 |= 1u << 9;                             /* IOSV: PG2-PG15 supplied */
	GPIOG_AFRL = (GPIOG_AFRL & ~0xf0000000u) | 0x80000000u; /* PG7 AF8 */
	GPIOG_AFRH = (GPIOG_AFRH & ~0xfu) | 0x8u;              /* PG8 AF8 */
	GPIOG_MODER = (GPIOG_MODER & ~(0xfu << 14)) | 0xau << 14;
	LPUART1_BRR = (uint32_t)((256ull * 20000000 + 115200 / 2) / 115200);
	LPUART1_CR1 = 1u << 0 | 1u << 2 | 1u << 3;      /* UE, RE, TE */
}

void board_setup(void)
{
	clock_setup();
	uart_setup();
	DEMCR |= 1u << 24; /* TRCENA */
	DWT_CYCCNT = 0;
	DWT_CTRL |= 1u;    /* CYCCNTENA */
}

void put_char(char c)
{
	while (!(LPUART1_ISR & (1u << 7)))
		;
	LPUART1_TDR = (uint8_t)c;
}

char get_char(void)
{
	while (!(LPUART1_ISR & (1u << 5)))
		;
	return (char)LPUART1_RDR;
}
