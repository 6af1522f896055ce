#include "gpio.h"

#include "rcc.h"

#define GPIO_MODER 0x00
#define GPIO_OSPEEDR 0x08
#define GPIO_PUPDR 0x0c
#define GPIO_IDR 0x10
#define GPIO_ODR 0x14
#define GPIO_BSRR 0x18
#define GPIO_LCKR 0x1c

void gpioa_init(struct gpio *g)
{
	*g = (struct gpio){{0}};
	g->regs[GPIO_MODER / 4] = 0xa8000000;
	g->regs[GPIO_OSPEEDR / 4] = 0x0c000000;
	g->regs[GPIO_PUPDR / 4] = 0x64000000;
}

static bool read_register(void *device, uint32_t off, uint32_t *value)
{
	const struct gpio *g = device;
	if (off >= sizeof g->regs || off == GPIO_BSRR)
		return false;
	*value = g->regs[off / 4];
	return true;
}

static bool write_register(void *device, uint32_t off, uint32_t value)
{
	struct gpio *g = device;
	if (off == GPIO_BSRR) { /* set/reset bits of ODR */
		g->regs[GPIO_ODR / 4] = (g->regs[GPIO_ODR / 4] | (value & 0xffff)) & ~(value >> 16);
		return true;
	}
	if (off >= sizeof g->regs || off == GPIO_IDR || off == GPIO_LCKR)
		return false;
	g->regs[off / 4] = value;
	return true;
}

const struct device_window gpioa_window = {"GPIOA", 0x40020000, 0x400,
					   {RCC_AHB1ENR, 1u << 0, "GPIOAEN"}, read_register,
					   write_register};
