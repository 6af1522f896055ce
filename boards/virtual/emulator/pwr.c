#include "pwr.h"

#include "rcc.h"

#define PWR_CR 0x00
#define PWR_CSR 0x04
#define CSR_VOSRDY (1u << 14)

#define PWR_L4_CR1 0x00
#define PWR_L4_CR2 0x04
#define PWR_L4_SR1 0x10
#define PWR_L4_SR2 0x14
#define PWR_L4_CR5 0x80
#define CR2_IOSV (1u << 9)

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

void pwr_l4r5_init(struct pwr *p)
{
	*p = (struct pwr){{0}};
	p->regs[PWR_L4_CR1 / 4] = 0x200;  /* voltage range 1 */
	p->regs[PWR_L4_CR5 / 4] = 0x100;  /* R1MODE: range 1 normal mode */
}

bool pwr_l4r5_vddio2_valid(const struct pwr *p)
{
	return p->regs[PWR_L4_CR2 / 4] & CR2_IOSV;
}

/* CR1-CR4, SR1, SR2, SCR, the pull registers (0x20-0x5c) and CR5. */
static bool l4r5_register(uint32_t off)
{
	return off <= 0x18 || (off >= 0x20 && off <= 0x5c) || off == PWR_L4_CR5;
}

static bool l4r5_read_register(void *device, uint32_t off, uint32_t *value)
{
	const struct pwr *p = device;
	if (!l4r5_register(off))
		return false;
	*value = off == PWR_L4_SR1 || off == PWR_L4_SR2 ? 0 : p->regs[off / 4]; /* nothing pending */
	return true;
}

static bool l4r5_write_register(void *device, uint32_t off, uint32_t value)
{
	struct pwr *p = device;
	if (!l4r5_register(off) || off == PWR_L4_SR1 || off == PWR_L4_SR2)
		return false;
	p->regs[off / 4] = value;
	return true;
}

const struct device_window pwr_l4r5_window = {"PWR", 0x40007000, 0x400,
					      {RCC_L4R5_APB1ENR1, 1u << 28, "PWREN"},
					      l4r5_read_register, l4r5_write_register};
