/* Register-level models of what the firmware touches (STM32F4 reference manual RM0090 for the
 * STM32 side, ARMv7-M ARM for the system control space). Any other register, any access with a
 * disabled peripheral clock and any configuration the timing model does not cover stops the
 * emulator: a silent difference from the real board would make the measurements wrong. */
#include "peripherals.h"

#include <stdio.h>
#include <string.h>

#include "machine.h"

#define CORE_HZ 24000000u
#define HSE_HZ 8000000u
#define HSI_HZ 16000000u

/* RCC */
#define RCC_CR 0x00
#define RCC_PLLCFGR 0x04
#define RCC_CFGR 0x08
#define RCC_AHB1ENR 0x30
#define RCC_APB1ENR 0x40
#define RCC_CR_HSION (1u << 0)
#define RCC_CR_HSEON (1u << 16)
#define RCC_CR_PLLON (1u << 24)
#define RCC_CR_PLLI2SON (1u << 26)
#define AHB1ENR_GPIOA (1u << 0)
#define APB1ENR_USART2 (1u << 17)
#define APB1ENR_PWR (1u << 28)

/* USART */
#define USART_SR 0x00
#define USART_DR 0x04
#define USART_CR1 0x0c
#define SR_RXNE (1u << 5)
#define SR_TC (1u << 6)
#define SR_TXE (1u << 7)
#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)
#define CR1_UE (1u << 13)
/* SR reads in a row without input after which the firmware is taken to be waiting for a byte:
 * then the emulator blocks on the host instead of spinning. A transmit routine reads SR at most
 * a couple of times per byte (TXE and TC are always set), a receive loop reaches this at once.
 * It depends on the firmware's polling only, so model time stays independent of host timing. */
#define RX_IDLE_POLLS 8

/* System control space offsets from 0xE000E000 */
#define STK_CSR 0x010
#define STK_RVR 0x014
#define STK_CVR 0x018
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
#define CSR_ENABLE (1u << 0)
#define CSR_TICKINT (1u << 1)
#define CSR_CLKSOURCE (1u << 2)
#define CSR_COUNTFLAG (1u << 16)
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL 0x000
#define DWT_CYCCNT 0x004
#define DWT_CTRL_CYCCNTENA 1u
#define DWT_CTRL_NUMCOMP (4u << 28)

struct region {
	const char *name;
	uint32_t base, size;
	uint64_t (*read)(struct machine *m, uint32_t off);
	void (*write)(struct machine *m, uint32_t off, uint32_t value);
};

struct mmio_ctx {
	struct machine *m;
	const struct region *r;
};

static void unsupported(struct machine *m, const char *dir, const struct region *r, uint32_t off)
{
	machine_fail(m, "%s unsupported register %s+0x%03x at address 0x%08x", dir, r->name, off,
		     r->base + off);
}

/* ---- RCC ---- */

static const struct region rcc_region;

static uint64_t rcc_read(struct machine *m, uint32_t off)
{
	uint32_t v = m->p.rcc[off / 4];
	if (off == RCC_CR) /* oscillators and PLLs are ready as soon as they are switched on */
		v = (v & ~0x0a020002u) | (v & RCC_CR_HSION) << 1 | (v & RCC_CR_HSEON) << 1 |
		    (v & RCC_CR_PLLON) << 1 | (v & RCC_CR_PLLI2SON) << 1;
	if (off == RCC_CFGR) /* SWS follows SW */
		v = (v & ~0xcu) | (v & 3u) << 2;
	return v;
}

static void rcc_check_sysclk(struct machine *m)
{
	uint32_t cfgr = m->p.rcc[RCC_CFGR / 4];
	if ((cfgr & 3u) != 2u)
		return;
	uint32_t pll = m->p.rcc[RCC_PLLCFGR / 4];
	uint32_t pllm = pll & 0x3f, plln = pll >> 6 & 0x1ff, pllp = ((pll >> 16 & 3) + 1) * 2;
	uint64_t src = (pll >> 22 & 1) ? HSE_HZ : HSI_HZ;
	uint32_t hpre = cfgr >> 4 & 0xf;
	uint32_t ahb_div = hpre < 8 ? 1 : (hpre < 12 ? 2u << (hpre - 8) : 64u << (hpre - 12));
	uint64_t hclk = pllm ? src / pllm * plln / pllp / ahb_div : 0;
	if (hclk != CORE_HZ)
		machine_fail(m, "core clock set to %llu Hz; the virtual board models the %u Hz "
				"benchmark clock at address 0x%08x", (unsigned long long)hclk, CORE_HZ,
			     rcc_region.base + RCC_CFGR);
}

static void rcc_write(struct machine *m, uint32_t off, uint32_t v)
{
	switch (off) {
	case 0x00: case 0x04: case 0x08: case 0x0c: case 0x10: case 0x14: case 0x18: case 0x20:
	case 0x24: case 0x30: case 0x34: case 0x38: case 0x40: case 0x44: case 0x50: case 0x54:
	case 0x58: case 0x60: case 0x64: case 0x70: case 0x74: case 0x80: case 0x84:
		m->p.rcc[off / 4] = v;
		if (off == RCC_CFGR || off == RCC_PLLCFGR)
			rcc_check_sysclk(m);
		return;
	}
	unsupported(m, "write to", &rcc_region, off);
}

static const struct region rcc_region = {"RCC", 0x40023800, 0x400, rcc_read, rcc_write};

/* ---- PWR, FLASH interface, GPIOA: plain register files behind their clock gates ---- */

static const struct region pwr_region, gpioa_region, flash_region;

static bool clocked(struct machine *m, const struct region *r, uint32_t off, uint32_t enr,
		    uint32_t bit, const char *bitname)
{
	if (m->p.rcc[enr / 4] & bit)
		return true;
	machine_fail(m, "access to %s with its clock disabled (RCC %s=0) at address 0x%08x",
		     r->name, bitname, r->base + off);
	return false;
}

static uint64_t pwr_read(struct machine *m, uint32_t off)
{
	if (!clocked(m, &pwr_region, off, RCC_APB1ENR, APB1ENR_PWR, "PWREN"))
		return 0;
	if (off == 0x00)
		return m->p.pwr[0];
	if (off == 0x04)
		return m->p.pwr[1] | 1u << 14; /* VOSRDY */
	unsupported(m, "read from", &pwr_region, off);
	return 0;
}

static void pwr_write(struct machine *m, uint32_t off, uint32_t v)
{
	if (!clocked(m, &pwr_region, off, RCC_APB1ENR, APB1ENR_PWR, "PWREN"))
		return;
	if (off <= 0x04)
		m->p.pwr[off / 4] = v;
	else
		unsupported(m, "write to", &pwr_region, off);
}

static const struct region pwr_region = {"PWR", 0x40007000, 0x400, pwr_read, pwr_write};

static uint64_t flash_read(struct machine *m, uint32_t off)
{
	if (off == 0x00)
		return m->p.flash_acr;
	unsupported(m, "read from", &flash_region, off);
	return 0;
}

static void flash_write(struct machine *m, uint32_t off, uint32_t v)
{
	if (off != 0x00) {
		unsupported(m, "write to", &flash_region, off);
		return;
	}
	if (v & 0xf) {
		machine_fail(m, "%u flash wait states requested; the timing model has 0 wait states "
				"(24 MHz) at address 0x%08x", v & 0xf, flash_region.base);
		return;
	}
	m->p.flash_acr = v & ~(3u << 11); /* ICRST/DCRST read back as 0 */
}

static const struct region flash_region = {"FLASH", 0x40023c00, 0x400, flash_read, flash_write};

static uint64_t gpioa_read(struct machine *m, uint32_t off)
{
	if (!clocked(m, &gpioa_region, off, RCC_AHB1ENR, AHB1ENR_GPIOA, "GPIOAEN"))
		return 0;
	if (off < 0x28 && off != 0x18)
		return m->p.gpioa[off / 4];
	unsupported(m, "read from", &gpioa_region, off);
	return 0;
}

static void gpioa_write(struct machine *m, uint32_t off, uint32_t v)
{
	if (!clocked(m, &gpioa_region, off, RCC_AHB1ENR, AHB1ENR_GPIOA, "GPIOAEN"))
		return;
	if (off == 0x18) { /* BSRR: set/reset bits of ODR */
		m->p.gpioa[0x14 / 4] = (m->p.gpioa[0x14 / 4] | (v & 0xffff)) & ~(v >> 16);
		return;
	}
	if (off < 0x28 && off != 0x10 && off != 0x1c)
		m->p.gpioa[off / 4] = v;
	else
		unsupported(m, "write to", &gpioa_region, off);
}

static const struct region gpioa_region = {"GPIOA", 0x40020000, 0x400, gpioa_read, gpioa_write};

/* ---- USART2 ---- */

static const struct region usart_region;

static uint64_t usart_read(struct machine *m, uint32_t off)
{
	struct periph *p = &m->p;
	if (!clocked(m, &usart_region, off, RCC_APB1ENR, APB1ENR_USART2, "USART2EN"))
		return 0;
	if (off == USART_SR) {
		if (!uart_rx_ready(m->uart) && ++p->rx_idle_polls >= RX_IDLE_POLLS) {
			uint32_t cr1 = p->usart[USART_CR1 / 4];
			if ((cr1 & (CR1_UE | CR1_RE)) != (CR1_UE | CR1_RE)) {
				machine_fail(m, "firmware waits for USART2 input with the receiver "
						"disabled (CR1=0x%04x) at address 0x%08x", cr1,
					     usart_region.base + off);
				return 0;
			}
			/* Blocking here keeps model time still while the host is silent. */
			switch (uart_wait_input(m->uart, &m->signal)) {
			case UART_WAIT_DATA:
				break;
			case UART_WAIT_EOF:
				machine_stop(m, STOP_INPUT_EOF);
				return 0;
			case UART_WAIT_INTERRUPTED:
				machine_stop(m, STOP_EVENT);
				return 0;
			}
		}
		uint32_t sr = p->usart[USART_SR / 4] | SR_TXE | SR_TC;
		return uart_rx_ready(m->uart) ? sr | SR_RXNE : sr & ~SR_RXNE;
	}
	if (off == USART_DR) {
		p->rx_idle_polls = 0;
		return uart_rx_ready(m->uart) ? uart_rx_pop(m->uart) : 0;
	}
	if (off < 0x1c)
		return p->usart[off / 4];
	unsupported(m, "read from", &usart_region, off);
	return 0;
}

static void usart_write(struct machine *m, uint32_t off, uint32_t v)
{
	struct periph *p = &m->p;
	if (!clocked(m, &usart_region, off, RCC_APB1ENR, APB1ENR_USART2, "USART2EN"))
		return;
	if (off == USART_DR) {
		uint32_t cr1 = p->usart[USART_CR1 / 4];
		if ((cr1 & (CR1_UE | CR1_TE)) != (CR1_UE | CR1_TE)) {
			machine_fail(m, "USART2 transmit with the transmitter disabled (CR1=0x%04x) "
					"at address 0x%08x", cr1, usart_region.base + off);
			return;
		}
		p->rx_idle_polls = 0;
		uart_put(m->uart, (uint8_t)v);
		return;
	}
	if (off == USART_SR)
		return; /* rc_w0 flags: TC and RXNE are derived, nothing to clear */
	if (off < 0x1c)
		p->usart[off / 4] = v;
	else
		unsupported(m, "write to", &usart_region, off);
}

static const struct region usart_region = {"USART2", 0x40004400, 0x400, usart_read, usart_write};

/* ---- SysTick ---- */

static uint32_t systick_value(const struct periph *p, uint64_t now)
{
	if (!(p->st_csr & CSR_ENABLE))
		return p->st_frozen;
	if (now <= p->st_anchor)
		return (uint32_t)(p->st_anchor - now);
	return p->st_reload - (uint32_t)((now - p->st_anchor - 1) % ((uint64_t)p->st_reload + 1));
}

/* Counter holds `value` at `now`: it reaches 0 after `value` cycles, then every reload+1. */
static void systick_restart(struct periph *p, uint64_t now, uint32_t value)
{
	p->st_anchor = now + value;
	p->st_next_tick = value ? p->st_anchor : now + (uint64_t)p->st_reload + 1;
}

void periph_systick_advance(struct periph *p, uint64_t now)
{
	if (!(p->st_csr & CSR_ENABLE) || p->st_next_tick > now)
		return;
	uint64_t period = (uint64_t)p->st_reload + 1;
	p->st_next_tick += ((now - p->st_next_tick) / period + 1) * period;
	p->st_csr |= CSR_COUNTFLAG;
	if (p->st_csr & CSR_TICKINT)
		p->st_pending = true;
}

uint64_t periph_next_tick_event(const struct periph *p)
{
	if ((p->st_csr & (CSR_ENABLE | CSR_TICKINT)) != (CSR_ENABLE | CSR_TICKINT))
		return UINT64_MAX;
	return p->st_next_tick;
}

/* DWT CYCCNT counts core cycles while DEMCR.TRCENA and DWT_CTRL.CYCCNTENA are both set. */
static bool dwt_counting(const struct periph *p)
{
	return (p->demcr & DEMCR_TRCENA) && (p->dwt_ctrl & DWT_CTRL_CYCCNTENA);
}

static uint32_t dwt_cyccnt(const struct periph *p, uint64_t now)
{
	return dwt_counting(p) ? p->dwt_base + (uint32_t)(now - p->dwt_since) : p->dwt_base;
}

static const struct region scs_region, dwt_region;

static uint64_t scs_read(struct machine *m, uint32_t off)
{
	struct periph *p = &m->p;
	uint64_t now;
	switch (off) {
	case STK_CSR: case STK_RVR: case STK_CVR: case SCB_DEMCR:
		if (!machine_access_time(m, &now))
			return 0;
		periph_systick_advance(p, now);
		if (off == STK_CSR) {
			uint32_t v = p->st_csr;
			p->st_csr &= ~CSR_COUNTFLAG;
			return v;
		}
		if (off == STK_RVR)
			return p->st_reload;
		if (off == STK_CVR)
			return systick_value(p, now);
		return p->demcr;
	case SCB_CPUID: return 0x410fc241; /* Cortex-M4 r0p1 */
	case SCB_VTOR: return p->vtor;
	case SCB_AIRCR: return 0xfa050000;
	case SCB_SCR: return p->scr;
	case SCB_CCR: return p->ccr;
	case SCB_SHPR1: case SCB_SHPR1 + 4: case SCB_SHPR1 + 8: return p->shpr[(off - SCB_SHPR1) / 4];
	case SCB_CPACR: return p->cpacr;
	case FPU_FPCCR: return p->fpccr;
	case FPU_FPCAR: return p->fpcar;
	case FPU_FPDSCR: return p->fpdscr;
	}
	unsupported(m, "read from", &scs_region, off);
	return 0;
}

static void scs_write(struct machine *m, uint32_t off, uint32_t v)
{
	struct periph *p = &m->p;
	uint64_t now;
	switch (off) {
	case STK_CSR: case STK_RVR: case STK_CVR: case SCB_DEMCR:
		if (!machine_access_time(m, &now))
			return;
		periph_systick_advance(p, now);
		if (off == SCB_DEMCR) {
			p->dwt_base = dwt_cyccnt(p, now);
			p->dwt_since = now;
			p->demcr = v;
			return;
		}
		uint32_t value = systick_value(p, now);
		if (off == STK_CSR) {
			if ((v & CSR_ENABLE) && !(v & CSR_CLKSOURCE)) {
				machine_fail(m, "SysTick on the external reference clock is not modelled "
						"at address 0x%08x", scs_region.base + off);
				return;
			}
			if ((v & CSR_ENABLE) && !(p->st_csr & CSR_ENABLE))
				systick_restart(p, now, p->st_frozen);
			if (!(v & CSR_ENABLE))
				p->st_frozen = value;
			p->st_csr = (p->st_csr & CSR_COUNTFLAG) | (v & 7u);
		} else if (off == STK_RVR) {
			p->st_reload = v & 0xffffff;
			if (p->st_csr & CSR_ENABLE)
				systick_restart(p, now, value);
		} else { /* any write clears the counter and COUNTFLAG */
			p->st_csr &= ~CSR_COUNTFLAG;
			p->st_frozen = 0;
			if (p->st_csr & CSR_ENABLE)
				systick_restart(p, now, 0);
		}
		machine_schedule(m);
		return;
	case SCB_VTOR: p->vtor = v & ~0x7fu; return;
	case SCB_SCR: p->scr = v; return;
	case SCB_CCR: p->ccr = v; return;
	case SCB_SHPR1: case SCB_SHPR1 + 4: case SCB_SHPR1 + 8: p->shpr[(off - SCB_SHPR1) / 4] = v; return;
	case SCB_CPACR: p->cpacr = v; return;
	case FPU_FPCCR: p->fpccr = v; return;
	case FPU_FPCAR: p->fpcar = v; return;
	case FPU_FPDSCR: p->fpdscr = v; return;
	}
	unsupported(m, "write to", &scs_region, off);
}

static const struct region scs_region = {"SCS", 0xe000e000, 0x1000, scs_read, scs_write};

static uint64_t dwt_read(struct machine *m, uint32_t off)
{
	uint64_t now;
	if (off == DWT_CTRL)
		return DWT_CTRL_NUMCOMP | m->p.dwt_ctrl;
	if (off == DWT_CYCCNT)
		return machine_access_time(m, &now) ? dwt_cyccnt(&m->p, now) : 0;
	unsupported(m, "read from", &dwt_region, off);
	return 0;
}

static void dwt_write(struct machine *m, uint32_t off, uint32_t v)
{
	struct periph *p = &m->p;
	uint64_t now;
	if (off != DWT_CTRL && off != DWT_CYCCNT) {
		unsupported(m, "write to", &dwt_region, off);
		return;
	}
	if (!machine_access_time(m, &now))
		return;
	p->dwt_base = off == DWT_CYCCNT ? v : dwt_cyccnt(p, now);
	p->dwt_since = now;
	if (off == DWT_CTRL)
		p->dwt_ctrl = v & DWT_CTRL_CYCCNTENA;
}

static const struct region dwt_region = {"DWT", 0xe0001000, 0x1000, dwt_read, dwt_write};

/* ---- Unicorn glue ---- */

static const struct region *const regions[] = {
	&rcc_region, &pwr_region, &flash_region, &gpioa_region, &usart_region, &scs_region, &dwt_region,
};

static struct mmio_ctx contexts[sizeof regions / sizeof regions[0]];

static uint64_t mmio_read(uc_engine *uc, uint64_t off, unsigned size, void *user)
{
	struct mmio_ctx *c = user;
	(void)uc;
	if (size != 4 || (off & 3)) {
		machine_fail(c->m, "%u-byte read from %s+0x%03x (only aligned 32-bit accesses are "
				   "supported) at address 0x%08x", size, c->r->name, (unsigned)off,
			     c->r->base + (uint32_t)off);
		return 0;
	}
	return c->r->read(c->m, (uint32_t)off);
}

static void mmio_write(uc_engine *uc, uint64_t off, unsigned size, uint64_t value, void *user)
{
	struct mmio_ctx *c = user;
	(void)uc;
	if (size != 4 || (off & 3)) {
		machine_fail(c->m, "%u-byte write to %s+0x%03x (only aligned 32-bit accesses are "
				   "supported) at address 0x%08x", size, c->r->name, (unsigned)off,
			     c->r->base + (uint32_t)off);
		return;
	}
	c->r->write(c->m, (uint32_t)off, (uint32_t)value);
}

int periph_init(struct machine *m)
{
	struct periph *p = &m->p;
	memset(p, 0, sizeof *p);
	p->rcc[RCC_CR / 4] = 0x83;            /* HSION, HSITRIM */
	p->rcc[RCC_PLLCFGR / 4] = 0x24003010;
	p->pwr[0] = 0x4000;
	p->gpioa[0] = 0xa8000000;             /* debug pins in AF mode */
	p->gpioa[0x08 / 4] = 0x0c000000;
	p->gpioa[0x0c / 4] = 0x64000000;
	p->usart[USART_SR / 4] = SR_TXE | SR_TC;
	p->ccr = 0x200;                       /* STKALIGN */
	p->fpccr = 0xc0000000;                /* ASPEN, LSPEN */
	p->st_reload = 0;
	for (size_t i = 0; i < sizeof regions / sizeof regions[0]; i++) {
		contexts[i] = (struct mmio_ctx){m, regions[i]};
		uc_err e = uc_mmio_map(m->uc, regions[i]->base, regions[i]->size, mmio_read,
				       &contexts[i], mmio_write, &contexts[i]);
		if (e != UC_ERR_OK) {
			fprintf(stderr, "vboard: error: cannot map %s: %s\n", regions[i]->name,
				uc_strerror(e));
			return -1;
		}
	}
	return 0;
}

bool periph_fpu_enabled(const struct periph *p)
{
	return (p->cpacr & (0xfu << 20)) == (0xfu << 20);
}

const char *periph_name(uint32_t addr)
{
	static const struct {
		uint32_t base;
		const char *name;
	} names[] = {
		{0x40000000, "TIM2"}, {0x40000400, "TIM3"}, {0x40000800, "TIM4"}, {0x40000c00, "TIM5"},
		{0x40001000, "TIM6"}, {0x40001400, "TIM7"}, {0x40001800, "TIM12"}, {0x40001c00, "TIM13"},
		{0x40002000, "TIM14"}, {0x40002800, "RTC"}, {0x40002c00, "WWDG"}, {0x40003000, "IWDG"},
		{0x40003800, "SPI2"}, {0x40003c00, "SPI3"}, {0x40004800, "USART3"}, {0x40004c00, "UART4"},
		{0x40005000, "UART5"}, {0x40005400, "I2C1"}, {0x40005800, "I2C2"}, {0x40005c00, "I2C3"},
		{0x40006400, "CAN1"}, {0x40006800, "CAN2"}, {0x40007400, "DAC"}, {0x40010000, "TIM1"},
		{0x40010400, "TIM8"}, {0x40011000, "USART1"}, {0x40011400, "USART6"}, {0x40012000, "ADC"},
		{0x40012c00, "SDIO"}, {0x40013000, "SPI1"}, {0x40013800, "SYSCFG"}, {0x40013c00, "EXTI"},
		{0x40014000, "TIM9"}, {0x40014400, "TIM10"}, {0x40014800, "TIM11"},
		{0x40020400, "GPIOB"}, {0x40020800, "GPIOC"}, {0x40020c00, "GPIOD"}, {0x40021000, "GPIOE"},
		{0x40021400, "GPIOF"}, {0x40021800, "GPIOG"}, {0x40021c00, "GPIOH"}, {0x40022000, "GPIOI"},
		{0x40023000, "CRC"}, {0x40024000, "BKPSRAM"}, {0x40026000, "DMA1"}, {0x40026400, "DMA2"},
		{0x40028000, "ETH"}, {0x40040000, "USB_OTG_HS"}, {0x50000000, "USB_OTG_FS"},
		{0x50050000, "DCMI"}, {0x50060000, "CRYP"}, {0x50060400, "HASH"}, {0x50060800, "RNG"},
		{0xe0000000, "ITM"}, {0xe0002000, "FPB"}, {0xe0040000, "TPIU"}, {0xe0041000, "ETM"},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (addr >= names[i].base && addr - names[i].base < 0x400)
			return names[i].name;
	return NULL;
}
