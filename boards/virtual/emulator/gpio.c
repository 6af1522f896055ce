#include "gpio.h"

#include "rcc.h"

#define GPIO_MODER 0x00
#define GPIO_OSPEEDR 0x08
#define GPIO_PUPDR 0x0c
#define GPIO_IDR 0x10
#define GPIO_ODR 0x14
#define GPIO_BSRR 0x18
#define GPIO_LCKR 0x1c
#define GPIO_BRR 0x28

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

void gpiog_l4r5_init(struct gpio *g)
{
	*g = (struct gpio){{0}};
	g->regs[GPIO_MODER / 4] = 0xffffffff;
}

static bool l4r5_write_register(void *device, uint32_t off, uint32_t value)
{
	struct gpio *g = device;
	if (off != GPIO_BRR)
		return write_register(device, off, value);
	g->regs[GPIO_ODR / 4] &= ~(value & 0xffff);
	return true;
}

const struct device_window gpiog_l4r5_window = {"GPIOG", 0x48001800, 0x400,
						{RCC_L4R5_AHB2ENR, 1u << 6, "GPIOGEN"}, read_register,
						l4r5_write_register};
