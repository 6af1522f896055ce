#include "rcc.h"

#include "flash_interface.h"

#define HCLK_MAX_HZ 168000000u /* STM32F407 datasheet */
#define HSE_HZ 8000000u
#define HSI_HZ 16000000u

#define RCC_CR 0x00
#define RCC_PLLCFGR 0x04
#define RCC_CFGR 0x08
#define RCC_SIZE 0x90
#define RCC_CR_HSION (1u << 0)
#define RCC_CR_HSEON (1u << 16)
#define RCC_CR_PLLON (1u << 24)
#define RCC_CR_PLLI2SON (1u << 26)
#define RCC_CR_HSIRDY (1u << 1)
#define RCC_CR_HSERDY (1u << 17)
#define RCC_CR_PLLRDY (1u << 25)
#define RCC_CR_PLLI2SRDY (1u << 27)
#define RCC_CR_READY (RCC_CR_HSIRDY | RCC_CR_HSERDY | RCC_CR_PLLRDY | RCC_CR_PLLI2SRDY)
#define PLLCFGR_PLLSRC_HSE (1u << 22)

void rcc_init(struct rcc *r, const struct device_core *core, struct flash_interface *flash)
{
	*r = (struct rcc){.core = core, .flash = flash, .hclk = HSI_HZ};
	r->regs[RCC_CR / 4] = 0x83;           /* HSION, HSITRIM */
	r->regs[RCC_PLLCFGR / 4] = 0x24003010;
}

void rcc_remove_hse(struct rcc *r)
{
	r->hse_absent = true;
}

bool rcc_clock_on(const struct rcc *r, const struct clock_gate *gate)
{
	return !gate->bit || (r->regs[gate->enr / 4] & gate->bit);
}

uint64_t rcc_hclk(const struct rcc *r)
{
	return r->hclk;
}

/* RCC_CR's ready bits: an oscillator is ready as soon as it is switched on (unless it is an absent
 * HSE), a PLL once its input is. */
static uint32_t ready_bits(const struct rcc *r)
{
	uint32_t cr = r->regs[RCC_CR / 4];
	bool hsi = cr & RCC_CR_HSION, hse = (cr & RCC_CR_HSEON) && !r->hse_absent;
	bool pll_input = (r->regs[RCC_PLLCFGR / 4] & PLLCFGR_PLLSRC_HSE) ? hse : hsi;
	return (hsi ? RCC_CR_HSIRDY : 0) | (hse ? RCC_CR_HSERDY : 0) |
	       ((cr & RCC_CR_PLLON) && pll_input ? RCC_CR_PLLRDY : 0) |
	       ((cr & RCC_CR_PLLI2SON) && pll_input ? RCC_CR_PLLI2SRDY : 0);
}

/* The system clock switches to the source RCC_CFGR.SW selects once that source is ready
 * (RM0090 section 6.2.6). */
static void switch_sysclk(struct rcc *r)
{
	static const uint32_t ready_bit[4] = {RCC_CR_HSIRDY, RCC_CR_HSERDY, RCC_CR_PLLRDY, 0};
	uint32_t wanted = r->regs[RCC_CFGR / 4] & 3u;
	if (ready_bits(r) & ready_bit[wanted])
		r->sysclk_source = wanted;
}

static uint64_t hclk_of_registers(const struct rcc *r)
{
	uint32_t cfgr = r->regs[RCC_CFGR / 4];
	uint32_t pll = r->regs[RCC_PLLCFGR / 4];
	uint64_t sysclk = HSI_HZ;
	if (r->sysclk_source == 1u) {
		sysclk = HSE_HZ;
	} else if (r->sysclk_source == 2u) {
		uint32_t pllm = pll & 0x3f, plln = pll >> 6 & 0x1ff, pllp = ((pll >> 16 & 3) + 1) * 2;
		uint64_t src = (pll & PLLCFGR_PLLSRC_HSE) ? HSE_HZ : HSI_HZ;
		sysclk = pllm ? src / pllm * plln / pllp : 0;
	}
	uint32_t hpre = cfgr >> 4 & 0xf;
	uint32_t ahb_div = hpre < 8 ? 1 : (hpre < 12 ? 2u << (hpre - 8) : 64u << (hpre - 12));
	return sysclk / ahb_div;
}

static void update_hclk(struct rcc *r)
{
	uint64_t hclk = hclk_of_registers(r);
	if (hclk == r->hclk)
		return;
	r->hclk = hclk;
	if (hclk > HCLK_MAX_HZ)
		device_fail(r->core, "core clock set to %llu Hz, above the STM32F407's %u Hz at address "
			    "0x%08x", (unsigned long long)hclk, HCLK_MAX_HZ, RCC_BASE + RCC_CFGR);
	else
		flash_interface_check_wait_states(r->flash, hclk, RCC_BASE + RCC_CFGR);
}

static bool read_register(void *device, uint32_t off, uint32_t *value)
{
	const struct rcc *r = device;
	if (off >= RCC_SIZE)
		return false;
	uint32_t v = r->regs[off / 4];
	if (off == RCC_CR)
		v = (v & ~RCC_CR_READY) | ready_bits(r);
	if (off == RCC_CFGR)
		v = (v & ~0xcu) | r->sysclk_source << 2;
	*value = v;
	return true;
}

static bool write_register(void *device, uint32_t off, uint32_t value)
{
	struct rcc *r = device;
	switch (off) {
	case 0x00: case 0x04: case 0x08: case 0x0c: case 0x10: case 0x14: case 0x18: case 0x20:
	case 0x24: case 0x30: case 0x34: case 0x38: case 0x40: case 0x44: case 0x50: case 0x54:
	case 0x58: case 0x60: case 0x64: case 0x70: case 0x74: case 0x80: case 0x84:
		r->regs[off / 4] = value;
		if (off == RCC_CR || off == RCC_CFGR || off == RCC_PLLCFGR) {
			switch_sysclk(r);
			update_hclk(r);
		}
		return true;
	}
	return false;
}

const struct device_window rcc_window = {"RCC", RCC_BASE, 0x400, {0}, read_register,
					 write_register};
