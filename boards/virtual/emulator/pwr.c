#include "pwr.h"

#include "rcc.h"

#define PWR_CR 0x00
#define PWR_CSR 0x04
#define CSR_VOSRDY (1u << 14)

void pwr_init(struct pwr *p)
{
	*p = (struct pwr){{0x4000, 0}};
}

static bool read_register(void *device, uint32_t off, uint32_t *value)
{
	const struct pwr *p = device;
	if (off == PWR_CR)
		*value = p->regs[0];
	else if (off == PWR_CSR)
		*value = p->regs[1] | CSR_VOSRDY;
	else
		return false;
	return true;
}

static bool write_register(void *device, uint32_t off, uint32_t value)
{
	struct pwr *p = device;
	if (off > PWR_CSR)
		return false;
	p->regs[off / 4] = value;
	return true;
}

const struct device_window pwr_window = {"PWR", 0x40007000, 0x400, {RCC_APB1ENR, 1u << 28, "PWREN"},
					 read_register, write_register};
