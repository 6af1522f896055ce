#include "systick.h"

#define CSR_ENABLE (1u << 0)
#define CSR_TICKINT (1u << 1)
#define CSR_CLKSOURCE (1u << 2)
#define CSR_COUNTFLAG (1u << 16)

void systick_init(struct systick *t, const struct device_core *core, struct cycle_jitter *jitter)
{
	*t = (struct systick){.core = core, .jitter = jitter};
}

static uint32_t current_value(const struct systick *t, uint64_t now)
{
	if (!(t->csr & CSR_ENABLE))
		return t->frozen;
	if (now <= t->anchor)
		return (uint32_t)(t->anchor - now);
	return t->reload - (uint32_t)((now - t->anchor - 1) % ((uint64_t)t->reload + 1));
}

/* Counter holds `value` at `now`: it reaches 0 after `value` cycles, then every reload+1. */
static void restart(struct systick *t, uint64_t now, uint32_t value)
{
	t->anchor = now + value;
	t->next_tick = value ? t->anchor : now + (uint64_t)t->reload + 1;
}

void systick_advance(struct systick *t, uint64_t now)
{
	if (!(t->csr & CSR_ENABLE) || t->next_tick > now)
		return;
	uint64_t period = (uint64_t)t->reload + 1;
	t->next_tick += ((now - t->next_tick) / period + 1) * period;
	t->csr |= CSR_COUNTFLAG;
	if (t->csr & CSR_TICKINT)
		t->pending = true;
}

uint64_t systick_next_event(const struct systick *t)
{
	if ((t->csr & (CSR_ENABLE | CSR_TICKINT)) != (CSR_ENABLE | CSR_TICKINT))
		return UINT64_MAX;
	return t->next_tick;
}

bool systick_pending(const struct systick *t)
{
	return t->pending;
}

void systick_taken(struct systick *t)
{
	t->pending = false;
}

uint32_t systick_read(struct systick *t, uint32_t reg, uint64_t now)
{
	if (reg == SYSTICK_CSR) {
		uint32_t v = t->csr;
		t->csr &= ~CSR_COUNTFLAG;
		return v;
	}
	if (reg == SYSTICK_RVR)
		return t->reload;
	/* CVR, read late by the jitter: it counts down */
	uint32_t value = current_value(t, now), late = cycle_jitter_draw(t->jitter);
	return value > late ? value - late : 0;
}

void systick_write(struct systick *t, uint32_t reg, uint32_t v, uint64_t now)
{
	uint32_t value = current_value(t, now);
	if (reg == SYSTICK_CSR) {
		if ((v & CSR_ENABLE) && !(v & CSR_CLKSOURCE)) {
			device_fail(t->core, "SysTick on the external reference clock is not modelled at "
				    "address 0x%08x", SYSTICK_BASE + reg);
			return;
		}
		if ((v & CSR_ENABLE) && !(t->csr & CSR_ENABLE))
			restart(t, now, t->frozen);
		if (!(v & CSR_ENABLE))
			t->frozen = value;
		t->csr = (t->csr & CSR_COUNTFLAG) | (v & 7u);
	} else if (reg == SYSTICK_RVR) {
		t->reload = v & 0xffffff;
		if (t->csr & CSR_ENABLE)
			restart(t, now, value);
	} else { /* CVR: any write clears the counter and COUNTFLAG */
		t->csr &= ~CSR_COUNTFLAG;
		t->frozen = 0;
		if (t->csr & CSR_ENABLE)
			restart(t, now, 0);
	}
	t->core->reschedule(t->core->core);
}
