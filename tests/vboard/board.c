#include "board.h"

#define RCC_CR MMIO32(0x40023800)
#define RCC_PLLCFGR MMIO32(0x40023804)
#define RCC_CFGR MMIO32(0x40023808)
#define RCC_AHB1ENR MMIO32(0x40023830)
#define RCC_APB1ENR MMIO32(0x40023840)
#define PWR_CR MMIO32(0x40007000)
#define FLASH_ACR MMIO32(0x40023c00)
#define GPIOA_MODER MMIO32(0x40020000)
#define GPIOA_OTYPER MMIO32(0x40020004)
#define GPIOA_OSPEEDR MMIO32(0x40020008)
#define GPIOA_PUPDR MMIO32(0x4002000c)
#define GPIOA_AFRL MMIO32(0x40020020)
#define USART2_SR MMIO32(0x40004400)
#define USART2_DR MMIO32(0x40004404)
#define USART2_BRR MMIO32(0x40004408)
#define USART2_CR1 MMIO32(0x4000440c)
#define USART2_CR2 MMIO32(0x40004410)
#define USART2_CR3 MMIO32(0x40004414)
#define DEMCR MMIO32(0xe000edfc)
#define DWT_CTRL MMIO32(0xe0001000)

static void clock_setup(void)
{
	RCC_CR |= 1u << 0; /* HSI on */
	while (!(RCC_CR & (1u << 1)))
		;
	RCC_CFGR &= ~3u;
	RCC_CR |= 1u << 16; /* HSE on */
	while (!(RCC_CR & (1u << 17)))
		;
	RCC_APB1ENR |= 1u << 28; /* PWR */
	PWR_CR |= 1u << 14;      /* VOS scale 1 */
	RCC_CFGR = (RCC_CFGR & ~0xfcf0u) | (4u << 10); /* AHB /1, APB1 /2, APB2 /1 */
	RCC_CR &= ~(1u << 24);   /* PLL off */
	/* HSE 8 MHz / M 8 * N 192 / P 8 = 24 MHz, Q 4 */
	RCC_PLLCFGR = 8u | 192u << 6 | ((8u / 2 - 1) << 16) | 1u << 22 | 4u << 24;
	RCC_CR |= 1u << 24;
	while (!(RCC_CR & (1u << 25)))
		;
	FLASH_ACR |= 1u << 10; /* DCEN */
	FLASH_ACR |= 1u << 9;  /* ICEN */
	FLASH_ACR = (FLASH_ACR & ~0xfu) | 0; /* 0 wait states */
	while ((FLASH_ACR & 0xfu) != 0)
		;
	RCC_CFGR = (RCC_CFGR & ~3u) | 2u; /* PLL */
	while (((RCC_CFGR >> 2) & 3u) != 2u)
		;
	RCC_CR &= ~1u; /* HSI off */
}

static void usart_setup(void)
{
	RCC_AHB1ENR |= 1u << 0;  /* GPIOA */
	RCC_APB1ENR |= 1u << 17; /* USART2 */
	GPIOA_OTYPER |= 3u << 2;
	GPIOA_OSPEEDR |= 0xfu << 4;
	GPIOA_AFRL = (GPIOA_AFRL & ~0xff00u) | 0x7700u;
	GPIOA_MODER = (GPIOA_MODER & ~0xf0u) | 0xa0u;
	GPIOA_PUPDR = (GPIOA_PUPDR & ~0xf0u) | 0x50u;
	USART2_BRR = (12000000 + 115200 / 2) / 115200; /* the board's baud (board.json) */
	USART2_CR2 = 0;
	USART2_CR3 = 0;
	USART2_CR1 = 1u << 13 | 1u << 3 | 1u << 2; /* UE, TE, RE */
}

void board_setup(void)
{
	clock_setup();
	usart_setup();
	DEMCR |= 1u << 24; /* TRCENA */
	DWT_CYCCNT = 0;
	DWT_CTRL |= 1u;    /* CYCCNTENA */
}

void put_char(char c)
{
	while (!(USART2_SR & (1u << 7)))
		;
	USART2_DR = (uint8_t)c;
}

char get_char(void)
{
	while (!(USART2_SR & (1u << 5)))
		;
	return (char)USART2_DR;
}
