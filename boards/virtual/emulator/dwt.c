#include "dwt.h"

#define DWT_CTRL 0x000
#define DWT_CYCCNT 0x004
#define DWT_CTRL_CYCCNTENA 1u
#define DWT_CTRL_NUMCOMP (4u << 28)
#define DEMCR_TRCENA (1u << 24)

void dwt_init(struct dwt *d, const struct device_core *core, struct cycle_jitter *jitter)
{
	*d = (struct dwt){.core = core, .jitter = jitter};
}

/* CYCCNT counts core cycles while DEMCR.TRCENA and DWT_CTRL.CYCCNTENA are both set. */
static bool counting(const struct dwt *d)
{
	return (d->demcr & DEMCR_TRCENA) && (d->ctrl & DWT_CTRL_CYCCNTENA);
}

static uint32_t cyccnt(const struct dwt *d, uint64_t now)
{
	return counting(d) ? d->base + (uint32_t)(now - d->since) : d->base;
}

uint32_t dwt_demcr(const struct dwt *d)
{
	return d->demcr;
}

void dwt_set_demcr(struct dwt *d, uint32_t value, uint64_t now)
{
	d->base = cyccnt(d, now);
	d->since = now;
	d->demcr = value;
}

static bool read_register(void *device, uint32_t off, uint32_t *value)
{
	struct dwt *d = device;
	uint64_t now;
	if (off == DWT_CTRL)
		*value = DWT_CTRL_NUMCOMP | d->ctrl;
	else if (off != DWT_CYCCNT)
		return false;
	else if (device_access_time(d->core, &now))
		*value = cyccnt(d, now) + cycle_jitter_draw(d->jitter);
	return true;
}

static bool write_register(void *device, uint32_t off, uint32_t value)
{
	struct dwt *d = device;
	uint64_t now;
	if (off != DWT_CTRL && off != DWT_CYCCNT)
		return false;
	if (!device_access_time(d->core, &now))
		return true;
	d->base = off == DWT_CYCCNT ? value : cyccnt(d, now);
	d->since = now;
	if (off == DWT_CTRL)
		d->ctrl = value & DWT_CTRL_CYCCNTENA;
	return true;
}

const struct device_window dwt_window = {"DWT", 0xe0001000, 0x1000, {0}, read_register,
					 write_register};
