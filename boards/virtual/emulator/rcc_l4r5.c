/* The STM32L4R5's RCC (RM0432 section 6): MSI (the reset clock), HSI16, HSE, the main PLL and
 * HSI48 (RCC_CRRCR), each ready as soon as it is on (a PLL once its input is), so that the
 * firmware's bounded waits end at once; the system clock switch and HCLK. */
#include "rcc.h"

#include "flash_interface.h"

#define HCLK_MAX_HZ 120000000u /* STM32L4R5 datasheet, range 1 boost mode */
#define HSE_HZ 8000000u        /* the ST-LINK's MCO on a Nucleo-144 */
#define HSI_HZ 16000000u
#define RCC_SIZE 0xa0

#define RCC_CR 0x00
#define RCC_CFGR 0x08
#define RCC_PLLCFGR 0x0c
#define RCC_CCIPR 0x88
#define RCC_CRRCR 0x98
#define CR_MSION (1u << 0)
#define CR_MSIRDY (1u << 1)
#define CR_HSION (1u << 8)
#define CR_HSIRDY (1u << 10)
#define CR_HSEON (1u << 16)
#define CR_HSERDY (1u << 17)
#define CR_PLLON (1u << 24)
#define CR_PLLRDY (1u << 25)
#define CR_READY (CR_MSIRDY | CR_HSIRDY | CR_HSERDY | CR_PLLRDY)
#define CRRCR_HSI48ON (1u << 0)
#define CRRCR_HSI48RDY (1u << 1)
#define PLLCFGR_PLLREN (1u << 24)
#define CCIPR_CLK48SEL(ccipr) ((ccipr) >> 26 & 3u)
#define CLK48SEL_HSI48 0u

enum sysclk { SYSCLK_MSI, SYSCLK_HSI16, SYSCLK_HSE, SYSCLK_PLL };

void rcc_l4r5_init(struct rcc *r, const struct device_core *core, struct flash_interface *flash)
{
	*r = (struct rcc){.core = core, .flash = flash, .hclk = 4000000u};
	r->regs[RCC_CR / 4] = 0x63;           /* MSION, MSIRDY, MSIRANGE 4 MHz */
	r->regs[RCC_PLLCFGR / 4] = 0x1000;    /* PLLN = 16 */
	r->sysclk_source = SYSCLK_MSI;
}

/* The MSI's frequency by RCC_CR.MSIRANGE (RM0432 6.2.3), once MSIRGSEL selects it. */
static uint64_t msi_hz(uint32_t cr)
{
	static const uint32_t hz[12] = {100000,   200000,   400000,   800000,   1000000,  2000000,
					4000000,  8000000,  16000000, 24000000, 32000000, 48000000};
	uint32_t range = cr & (1u << 3) ? cr >> 4 & 0xf : 6;
	return range < 12 ? hz[range] : 0;
}

static uint32_t ready_bits(const struct rcc *r)
{
	uint32_t cr = r->regs[RCC_CR / 4];
	bool msi = cr & CR_MSION, hsi = cr & CR_HSION, hse = (cr & CR_HSEON) && !r->hse_absent;
	bool inputs[4] = {false, msi, hsi, hse}; /* by PLLCFGR.PLLSRC: none, MSI, HSI16, HSE */
	bool pll = (cr & CR_PLLON) && inputs[r->regs[RCC_PLLCFGR / 4] & 3u];
	return (msi ? CR_MSIRDY : 0) | (hsi ? CR_HSIRDY : 0) | (hse ? CR_HSERDY : 0) |
	       (pll ? CR_PLLRDY : 0);
}

bool rcc_l4r5_clock48_on(const struct rcc *r)
{
	uint32_t ccipr = r->regs[RCC_CCIPR / 4];
	return CCIPR_CLK48SEL(ccipr) == CLK48SEL_HSI48 && (r->regs[RCC_CRRCR / 4] & CRRCR_HSI48ON);
}

/* The PLL's R output, the system clock's (RM0432 6.4.4): input / (PLLM + 1) * PLLN / 2(PLLR + 1),
 * 0 unless PLLREN enables it. */
static uint64_t pllclk(const struct rcc *r)
{
	uint32_t pll = r->regs[RCC_PLLCFGR / 4];
	uint64_t inputs[4] = {0, msi_hz(r->regs[RCC_CR / 4]), HSI_HZ, HSE_HZ};
	uint32_t pllm = (pll >> 4 & 0xf) + 1, plln = pll >> 8 & 0x7f, pllr = ((pll >> 25 & 3) + 1) * 2;
	return pll & PLLCFGR_PLLREN ? inputs[pll & 3u] / pllm * plln / pllr : 0;
}

static uint64_t hclk_of_registers(const struct rcc *r)
{
	uint64_t sysclk[4] = {msi_hz(r->regs[RCC_CR / 4]), HSI_HZ, HSE_HZ, pllclk(r)};
	uint32_t hpre = r->regs[RCC_CFGR / 4] >> 4 & 0xf;
	uint32_t ahb_div = hpre < 8 ? 1 : (hpre < 12 ? 2u << (hpre - 8) : 64u << (hpre - 12));
	return sysclk[r->sysclk_source] / ahb_div;
}

static void update_clocks(struct rcc *r)
{
	static const uint32_t ready_bit[4] = {CR_MSIRDY, CR_HSIRDY, CR_HSERDY, CR_PLLRDY};
	uint32_t wanted = r->regs[RCC_CFGR / 4] & 3u;
	if (ready_bits(r) & ready_bit[wanted])
		r->sysclk_source = wanted;
	uint64_t hclk = hclk_of_registers(r);
	if (hclk == r->hclk)
		return;
	r->hclk = hclk;
	if (hclk > HCLK_MAX_HZ)
		device_fail(r->core, "core clock set to %llu Hz, above the STM32L4R5's %u Hz at address "
			    "0x%08x", (unsigned long long)hclk, HCLK_MAX_HZ, RCC_L4R5_BASE + RCC_CFGR);
	else
		flash_interface_check_wait_states(r->flash, hclk, RCC_L4R5_BASE + RCC_CFGR);
}

static bool read_register(void *device, uint32_t off, uint32_t *value)
{
	const struct rcc *r = device;
	if (off >= RCC_SIZE)
		return false;
	uint32_t v = r->regs[off / 4];
	if (off == RCC_CR)
		v = (v & ~CR_READY) | ready_bits(r);
	else if (off == RCC_CFGR)
		v = (v & ~0xcu) | r->sysclk_source << 2;
	else if (off == RCC_CRRCR)
		v = v & CRRCR_HSI48ON ? v | CRRCR_HSI48RDY : v & ~CRRCR_HSI48RDY;
	*value = v;
	return true;
}

static bool write_register(void *device, uint32_t off, uint32_t value)
{
	struct rcc *r = device;
	if (off >= RCC_SIZE || off == 0x24 || off == 0x34 || off == 0x44 || off == 0x54 || off == 0x64 ||
	    off == 0x74 || off == 0x84 || off == 0x8c)
		return false; /* reserved */
	r->regs[off / 4] = value;
	if (off == RCC_CR || off == RCC_CFGR || off == RCC_PLLCFGR)
		update_clocks(r);
	return true;
}

const struct device_window rcc_l4r5_window = {"RCC", RCC_L4R5_BASE, 0x400, {0}, read_register,
					      write_register};
