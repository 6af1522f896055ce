#include "dbgmcu.h"

#define DBGMCU_IDCODE 0x00

void dbgmcu_l4r5_init(struct dbgmcu *d)
{
	*d = (struct dbgmcu){{DBGMCU_L4R5_IDCODE}};
}

static bool read_register(void *device, uint32_t off, uint32_t *value)
{
	const struct dbgmcu *d = device;
	if (off >= sizeof d->regs)
		return false;
	*value = d->regs[off / 4];
	return true;
}

static bool write_register(void *device, uint32_t off, uint32_t value)
{
	struct dbgmcu *d = device;
	if (off == DBGMCU_IDCODE || off >= sizeof d->regs)
		return false;
	d->regs[off / 4] = value;
	return true;
}

const struct device_window dbgmcu_l4r5_window = {"DBGMCU", 0xe0042000u, 0x400, {0}, read_register,
						 write_register};
