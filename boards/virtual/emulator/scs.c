#include "scs.h"

#include "dwt.h"
#include "systick.h"

#define SCS_BASE 0xe000e000u
#define SCS_SYSTICK (SYSTICK_BASE - SCS_BASE)
#define SCB_CPUID 0xd00
#define SCB_VTOR 0xd08
#define SCB_AIRCR 0xd0c
#define SCB_SCR 0xd10
#define SCB_CCR 0xd14
#define SCB_SHPR1 0xd18
#define SCB_CPACR 0xd88
#define SCB_DEMCR 0xdfc
#define FPU_FPCCR 0xf34
#define FPU_FPCAR 0xf38
#define FPU_FPDSCR 0xf3c
#define CCR_STKALIGN (1u << 9)

void scs_init(struct scs *s, const struct device_core *core, struct systick *systick,
	      struct dwt *dwt)
{
	*s = (struct scs){.core = core, .systick = systick, .dwt = dwt};
	s->ccr = CCR_STKALIGN;
	s->fpccr = 0xc0000000; /* ASPEN, LSPEN */
}

uint32_t scs_vector_table(const struct scs *s)
{
	return s->vtor;
}

bool scs_stack_align8(const struct scs *s)
{
	return s->ccr & CCR_STKALIGN;
}

uint32_t scs_cpacr(const struct scs *s)
{
	return s->cpacr;
}

bool scs_fpu_enabled(const struct scs *s)
{
	return (s->cpacr & (0xfu << 20)) == (0xfu << 20);
}

/* The registers that depend on model time: SysTick's and DEMCR (which starts or stops CYCCNT). */
static bool timed(uint32_t off)
{
	return off == SCS_SYSTICK + SYSTICK_CSR || off == SCS_SYSTICK + SYSTICK_RVR ||
	       off == SCS_SYSTICK + SYSTICK_CVR || off == SCB_DEMCR;
}

static bool read_register(void *device, uint32_t off, uint32_t *value)
{
	struct scs *s = device;
	uint64_t now;
	if (timed(off)) {
		if (!device_access_time(s->core, &now))
			return true;
		/* SysTick is brought up to the time of every timed access */
		systick_advance(s->systick, now);
		*value = off == SCB_DEMCR ? dwt_demcr(s->dwt)
					  : systick_read(s->systick, off - SCS_SYSTICK, now);
		return true;
	}
	switch (off) {
	case SCB_CPUID: *value = 0x410fc241; return true; /* Cortex-M4 r0p1 */
	case SCB_VTOR: *value = s->vtor; return true;
	case SCB_AIRCR: *value = 0xfa050000; return true;
	case SCB_SCR: *value = s->scr; return true;
	case SCB_CCR: *value = s->ccr; return true;
	case SCB_SHPR1: case SCB_SHPR1 + 4: case SCB_SHPR1 + 8:
		*value = s->shpr[(off - SCB_SHPR1) / 4];
		return true;
	case SCB_CPACR: *value = s->cpacr; return true;
	case FPU_FPCCR: *value = s->fpccr; return true;
	case FPU_FPCAR: *value = s->fpcar; return true;
	case FPU_FPDSCR: *value = s->fpdscr; return true;
	}
	return false;
}

static bool write_register(void *device, uint32_t off, uint32_t value)
{
	struct scs *s = device;
	uint64_t now;
	if (timed(off)) {
		if (!device_access_time(s->core, &now))
			return true;
		systick_advance(s->systick, now);
		if (off == SCB_DEMCR)
			dwt_set_demcr(s->dwt, value, now);
		else
			systick_write(s->systick, off - SCS_SYSTICK, value, now);
		return true;
	}
	switch (off) {
	case SCB_VTOR: s->vtor = value & ~0x7fu; return true;
	case SCB_SCR: s->scr = value; return true;
	case SCB_CCR: s->ccr = value; return true;
	case SCB_SHPR1: case SCB_SHPR1 + 4: case SCB_SHPR1 + 8:
		s->shpr[(off - SCB_SHPR1) / 4] = value;
		return true;
	case SCB_CPACR: s->cpacr = value; return true;
	case FPU_FPCCR: s->fpccr = value; return true;
	case FPU_FPCAR: s->fpcar = value; return true;
	case FPU_FPDSCR: s->fpdscr = value; return true;
	}
	return false;
}

const struct device_window scs_window = {"SCS", SCS_BASE, 0x1000, {0}, read_register,
					 write_register};
