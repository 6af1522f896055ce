#include "flash_interface.h"

#include "rcc.h"

#define FLASH_ACR 0x00

/* RM0090 table 10: one wait state per started 30 MHz beyond the first at 2.7-3.6 V. */
const struct flash_rules flash_rules_stm32f407 = {FLASH_INTERFACE_BASE, 30000000u, "RM0090 table 10",
						  "at 2.7-3.6 V", 0, ART_DCACHE_LINES};
/* RM0432 3.3.3: one per started 20 MHz in voltage range 1; FLASH_ACR resets with both
 * caches on. Its caches hold 1 KiB of instructions and 256 bytes of data (RM0432 3.3.4, 3.3.5):
 * ART_LINE_BYTES lines of that capacity. */
const struct flash_rules flash_rules_stm32l4r5 = {FLASH_INTERFACE_L4R5_BASE, 20000000u,
						  "RM0432 3.3.3", "in voltage range 1",
						  FLASH_ACR_ICEN | FLASH_ACR_DCEN, 256u / ART_LINE_BYTES};

void flash_interface_init(struct flash_interface *f, const struct device_core *core,
			  const struct rcc *rcc, const struct flash_rules *rules)
{
	f->core = core;
	f->rcc = rcc;
	f->rules = rules;
	art_reset(&f->art);
	f->art.dcache.size = rules->dcache_lines;
	art_set_acr(&f->art, rules->acr_reset);
}

void flash_interface_check_wait_states(const struct flash_interface *f, uint64_t hclk,
				       uint32_t reg_addr)
{
	unsigned needed = art_required_wait_states(hclk, f->rules->hz_per_wait_state);
	if (art_wait_states(&f->art) < needed)
		device_fail(f->core, "%u flash wait states at HCLK %llu Hz; %s needs %u %s at address "
			    "0x%08x", art_wait_states(&f->art), (unsigned long long)hclk, f->rules->source,
			    needed, f->rules->condition, reg_addr);
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
	flash_interface_check_wait_states(f, rcc_hclk(f->rcc), f->rules->base + off);
	f->core->reschedule(f->core->core); /* the core prices flash accesses by the new setting */
	return true;
}

const struct device_window flash_interface_window = {"FLASH", FLASH_INTERFACE_BASE, 0x400, {0},
						     read_register, write_register};
const struct device_window flash_interface_l4r5_window = {"FLASH", FLASH_INTERFACE_L4R5_BASE, 0x400,
							  {0}, read_register, write_register};
