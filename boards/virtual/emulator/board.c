#include "board.h"

#include <stdlib.h>
#include <string.h>

struct board *board_new(const struct device_core *core, struct uart_host *uart,
			const struct chip *chip)
{
	struct board *b = calloc(1, sizeof *b);
	b->chip = chip;
	b->core = *core;
	systick_init(&b->systick, &b->core, &b->jitter);
	dwt_init(&b->dwt, &b->core, &b->jitter);
	scs_init(&b->scs, &b->core, &b->systick, &b->dwt);
	if (chip->devices == CHIP_DEVICES_STM32F4) {
		rcc_init(&b->rcc, &b->core, &b->flash);
		pwr_init(&b->pwr);
		flash_interface_init(&b->flash, &b->core, &b->rcc, &flash_rules_stm32f407);
		gpioa_init(&b->gpio);
		usart_init(&b->usart, &b->core, uart, &usart2_layout, NULL);
		rng_init(&b->rng, &b->core, NULL);
		const struct board_window windows[] = {
			{&rcc_window, &b->rcc},     {&pwr_window, &b->pwr},
			{&flash_interface_window, &b->flash}, {&gpioa_window, &b->gpio},
			{&usart2_window, &b->usart}, {&rng_window, &b->rng},
			{&scs_window, &b->scs},     {&dwt_window, &b->dwt},
		};
		memcpy(b->window, windows, sizeof windows);
		b->nwindows = sizeof windows / sizeof windows[0];
	} else {
		rcc_l4r5_init(&b->rcc, &b->core, &b->flash);
		pwr_l4r5_init(&b->pwr);
		flash_interface_init(&b->flash, &b->core, &b->rcc, &flash_rules_stm32l4r5);
		gpiog_l4r5_init(&b->gpio);
		usart_init(&b->usart, &b->core, uart, &lpuart1_layout, &b->pwr);
		rng_init(&b->rng, &b->core, &b->rcc);
		dbgmcu_l4r5_init(&b->dbgmcu);
		const struct board_window windows[] = {
			{&rcc_l4r5_window, &b->rcc},     {&pwr_l4r5_window, &b->pwr},
			{&flash_interface_l4r5_window, &b->flash}, {&gpiog_l4r5_window, &b->gpio},
			{&lpuart1_window, &b->usart},     {&rng_l4r5_window, &b->rng},
			{&scs_window, &b->scs},           {&dwt_window, &b->dwt},
			{&dbgmcu_l4r5_window, &b->dbgmcu},
		};
		memcpy(b->window, windows, sizeof windows);
		b->nwindows = sizeof windows / sizeof windows[0];
	}
	return b;
}

void board_free(struct board *b)
{
	free(b);
}

/* The window holding `addr` for an access of `size` bytes, or NULL after failing. */
static const struct board_window *window_of(struct board *b, uint32_t addr, unsigned size,
					    const char *dir)
{
	for (unsigned i = 0; i < b->nwindows; i++) {
		const struct device_window *w = b->window[i].regs;
		uint32_t off = addr - w->base;
		if (addr < w->base || off >= w->size)
			continue;
		if (size == 4 && !(off & 3))
			return &b->window[i];
		device_fail(&b->core, "%u-byte %s %s+0x%03x (only aligned 32-bit accesses are "
			    "supported) at address 0x%08x", size, dir, w->name, off, addr);
		return NULL;
	}
	device_fail(&b->core, "%s address 0x%08x outside the peripherals", dir, addr);
	return NULL;
}

static bool clocked(struct board *b, const struct device_window *w, uint32_t addr)
{
	if (rcc_clock_on(&b->rcc, &w->gate))
		return true;
	device_fail(&b->core, "access to %s with its clock disabled (RCC %s=0) at address 0x%08x",
		    w->name, w->gate.bit_name, addr);
	return false;
}

static void unsupported(struct board *b, const char *dir, const struct device_window *w,
			uint32_t addr)
{
	device_fail(&b->core, "%s unsupported register %s+0x%03x at address 0x%08x", dir, w->name,
		    addr - w->base, addr);
}

uint32_t board_read(struct board *b, uint32_t addr, unsigned size)
{
	const struct board_window *w = window_of(b, addr, size, "read from");
	uint32_t value = 0;
	if (w && clocked(b, w->regs, addr) && !w->regs->read(w->device, addr - w->regs->base, &value))
		unsupported(b, "read from", w->regs, addr);
	return value;
}

void board_write(struct board *b, uint32_t addr, unsigned size, uint32_t value)
{
	const struct board_window *w = window_of(b, addr, size, "write to");
	if (w && clocked(b, w->regs, addr) && !w->regs->write(w->device, addr - w->regs->base, value))
		unsupported(b, "write to", w->regs, addr);
}

struct peripheral_name {
	uint32_t base;
	const char *name;
};

const char *board_peripheral_name(const struct chip *chip, uint32_t addr)
{
	static const struct peripheral_name stm32f407[] = {
		{0x40000000, "TIM2"}, {0x40000400, "TIM3"}, {0x40000800, "TIM4"}, {0x40000c00, "TIM5"},
		{0x40001000, "TIM6"}, {0x40001400, "TIM7"}, {0x40001800, "TIM12"}, {0x40001c00, "TIM13"},
		{0x40002000, "TIM14"}, {0x40002800, "RTC"}, {0x40002c00, "WWDG"}, {0x40003000, "IWDG"},
		{0x40003800, "SPI2"}, {0x40003c00, "SPI3"}, {0x40004800, "USART3"}, {0x40004c00, "UART4"},
		{0x40005000, "UART5"}, {0x40005400, "I2C1"}, {0x40005800, "I2C2"}, {0x40005c00, "I2C3"},
		{0x40006400, "CAN1"}, {0x40006800, "CAN2"}, {0x40007400, "DAC"}, {0x40010000, "TIM1"},
		{0x40010400, "TIM8"}, {0x40011000, "USART1"}, {0x40011400, "USART6"}, {0x40012000, "ADC"},
		{0x40012c00, "SDIO"}, {0x40013000, "SPI1"}, {0x40013800, "SYSCFG"}, {0x40013c00, "EXTI"},
		{0x40014000, "TIM9"}, {0x40014400, "TIM10"}, {0x40014800, "TIM11"},
		{0x40020400, "GPIOB"}, {0x40020800, "GPIOC"}, {0x40020c00, "GPIOD"}, {0x40021000, "GPIOE"},
		{0x40021400, "GPIOF"}, {0x40021800, "GPIOG"}, {0x40021c00, "GPIOH"}, {0x40022000, "GPIOI"},
		{0x40023000, "CRC"}, {0x40024000, "BKPSRAM"}, {0x40026000, "DMA1"}, {0x40026400, "DMA2"},
		{0x40028000, "ETH"}, {0x40040000, "USB_OTG_HS"}, {0x50000000, "USB_OTG_FS"},
		{0x50050000, "DCMI"}, {0x50060000, "CRYP"}, {0x50060400, "HASH"}, {0x50060800, "RNG"},
		{0xe0000000, "ITM"}, {0xe0002000, "FPB"}, {0xe0040000, "TPIU"}, {0xe0041000, "ETM"},
	};
	/* RM0432 2.2.2, table 3 (the common ones) */
	static const struct peripheral_name stm32l4r5[] = {
		{0x40000000, "TIM2"}, {0x40000400, "TIM3"}, {0x40000800, "TIM4"}, {0x40000c00, "TIM5"},
		{0x40001000, "TIM6"}, {0x40001400, "TIM7"}, {0x40002800, "RTC"}, {0x40002c00, "WWDG"},
		{0x40003000, "IWDG"}, {0x40003800, "SPI2"}, {0x40003c00, "SPI3"}, {0x40004400, "USART2"},
		{0x40004800, "USART3"}, {0x40004c00, "UART4"}, {0x40005000, "UART5"},
		{0x40005400, "I2C1"}, {0x40005800, "I2C2"}, {0x40005c00, "I2C3"}, {0x40010000, "SYSCFG"},
		{0x40010400, "EXTI"}, {0x40012c00, "TIM1"}, {0x40013000, "SPI1"}, {0x40013400, "TIM8"},
		{0x40013800, "USART1"}, {0x40020000, "DMA1"}, {0x40020400, "DMA2"}, {0x40023000, "CRC"},
		{0x48000000, "GPIOA"}, {0x48000400, "GPIOB"}, {0x48000800, "GPIOC"},
		{0x48000c00, "GPIOD"}, {0x48001000, "GPIOE"}, {0x48001400, "GPIOF"},
		{0x48001c00, "GPIOH"}, {0x48002000, "GPIOI"}, {0x50060000, "AES"}, {0x50060400, "HASH"},
		{0xe0000000, "ITM"}, {0xe0002000, "FPB"}, {0xe0040000, "TPIU"}, {0xe0041000, "ETM"},
	};
	const struct peripheral_name *names = stm32f407;
	size_t count = sizeof stm32f407 / sizeof stm32f407[0];
	if (chip->devices == CHIP_DEVICES_STM32L4P) {
		names = stm32l4r5;
		count = sizeof stm32l4r5 / sizeof stm32l4r5[0];
	}
	for (size_t i = 0; i < count; i++)
		if (addr >= names[i].base && addr - names[i].base < 0x400)
			return names[i].name;
	return NULL;
}
