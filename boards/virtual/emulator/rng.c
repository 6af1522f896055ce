#include "rng.h"

#include "rcc.h"

#define RNG_BASE 0x50060800u
#define RNG_CR 0x00
#define RNG_SR 0x04
#define RNG_DR 0x08
#define RNG_CR_RNGEN (1u << 2)
#define RNG_CR_IE (1u << 3)
#define RNG_SR_DRDY (1u << 0)

void rng_init(struct rng *r, const struct device_core *core, const struct rcc *clock48)
{
	*r = (struct rng){.core = core, .clock48 = clock48, .state = 0x9e3779b97f4a7c15ull};
}

static bool read_register(void *device, uint32_t off, uint32_t *value)
{
	struct rng *r = device;
	bool ready = r->cr & RNG_CR_RNGEN;
	if (ready && (off == RNG_SR || off == RNG_DR) && r->clock48 && !rcc_l4r5_clock48_on(r->clock48)) {
		device_fail(r->core, "RNG read without its 48 MHz clock (RCC_CRRCR.HSI48ON=0 or "
			    "RCC_CCIPR.CLK48SEL not HSI48): no number would ever be ready at address "
			    "0x%08x", RNG_BASE + off);
		return true;
	}
	if (off == RNG_CR) {
		*value = r->cr;
	} else if (off == RNG_SR) {
		*value = ready ? RNG_SR_DRDY : 0;
	} else if (off != RNG_DR) {
		return false;
	} else if (ready) {
		r->state ^= r->state << 13;
		r->state ^= r->state >> 7;
		r->state ^= r->state << 17;
		*value = (uint32_t)(r->state >> 32);
	}
	return true;
}

static bool write_register(void *device, uint32_t off, uint32_t value)
{
	struct rng *r = device;
	if (off == RNG_SR) /* the error flags are cleared by writing 0; this RNG raises none */
		return true;
	if (off != RNG_CR)
		return false;
	if (value & RNG_CR_IE)
		device_fail(r->core, "RNG interrupts are not emulated (RNG_CR=0x%08x) at address 0x%08x",
			    value, RNG_BASE + off);
	else
		r->cr = value;
	return true;
}

const struct device_window rng_window = {"RNG", RNG_BASE, 0x400, {RCC_AHB2ENR, 1u << 6, "RNGEN"},
					 read_register, write_register};
const struct device_window rng_l4r5_window = {"RNG", RNG_BASE, 0x400,
					      {RCC_L4R5_AHB2ENR, 1u << 18, "RNGEN"}, read_register,
					      write_register};
