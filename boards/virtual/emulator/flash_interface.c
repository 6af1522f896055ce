#include "flash_interface.h"

#include "rcc.h"

#define FLASH_ACR 0x00

void flash_interface_init(struct flash_interface *f, const struct device_core *core,
			  const struct rcc *rcc)
{
	f->core = core;
	f->rcc = rcc;
	art_reset(&f->art);
}

void flash_interface_check_wait_states(const struct flash_interface *f, uint64_t hclk,
				       uint32_t reg_addr)
{
	unsigned needed = art_required_wait_states(hclk);
	if (art_wait_states(&f->art) < needed)
		device_fail(f->core, "%u flash wait states at HCLK %llu Hz; RM0090 table 10 needs %u "
			    "at 2.7-3.6 V at address 0x%08x", art_wait_states(&f->art),
			    (unsigned long long)hclk, needed, reg_addr);
}

static bool read_register(void *device, uint32_t off, uint32_t *value)
{
	const struct flash_interface *f = device;
	if (off != FLASH_ACR)
		return false;
	*value = f->art.acr;
	return true;
}

static bool write_register(void *device, uint32_t off, uint32_t value)
{
	struct flash_interface *f = device;
	if (off != FLASH_ACR)
		return false;
	art_set_acr(&f->art, value);
	flash_interface_check_wait_states(f, rcc_hclk(f->rcc), FLASH_INTERFACE_BASE + off);
	f->core->reschedule(f->core->core); /* the core prices flash accesses by the new setting */
	return true;
}

const struct device_window flash_interface_window = {"FLASH", FLASH_INTERFACE_BASE, 0x400, {0},
						     read_register, write_register};
