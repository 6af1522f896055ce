/* Register-level models of what the firmware touches (STM32F4 reference manual RM0090 for the
 * STM32 side, ARMv7-M ARM for the system control space). Any other register, any access with a
 * disabled peripheral clock and any configuration the timing model does not cover stops the
 * emulator: a silent difference from the real board would make the measurements wrong. */
#include "peripherals.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "flash_art.h"
#include "uart.h"

#define HCLK_MAX_HZ 168000000u /* STM32F407 datasheet */
#define HSE_HZ 8000000u
#define HSI_HZ 16000000u

/* RCC */
#define RCC_CR 0x00
#define RCC_PLLCFGR 0x04
#define RCC_CFGR 0x08
#define RCC_AHB1ENR 0x30
#define RCC_AHB2ENR 0x34
#define RCC_APB1ENR 0x40
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
#define AHB1ENR_GPIOA (1u << 0)
#define APB1ENR_USART2 (1u << 17)
#define APB1ENR_PWR (1u << 28)
#define AHB2ENR_RNG (1u << 6)

/* RNG (RM0090 section 24) */
#define RNG_CR 0x00
#define RNG_SR 0x04
#define RNG_DR 0x08
#define RNG_CR_RNGEN (1u << 2)
#define RNG_CR_IE (1u << 3)
#define RNG_SR_DRDY (1u << 0)

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
#define CCR_STKALIGN (1u << 9)

enum window { WIN_RCC, WIN_PWR, WIN_FLASH, WIN_GPIOA, WIN_USART2, WIN_RNG, WIN_SCS, WIN_DWT };

const struct periph_window periph_windows[PERIPH_WINDOWS] = {
	[WIN_RCC] = {"RCC", 0x40023800, 0x400},
	[WIN_PWR] = {"PWR", 0x40007000, 0x400},
	[WIN_FLASH] = {"FLASH", 0x40023c00, 0x400},
	[WIN_GPIOA] = {"GPIOA", 0x40020000, 0x400},
	[WIN_USART2] = {"USART2", 0x40004400, 0x400},
	[WIN_RNG] = {"RNG", 0x50060800, 0x400},
	[WIN_SCS] = {"SCS", 0xe000e000, 0x1000},
	[WIN_DWT] = {"DWT", 0xe0001000, 0x1000},
};

struct periph {
	struct periph_core core;
	struct uart_host *uart;

	/* RCC, PWR, FLASH, GPIOA, USART2 register files (word index = offset / 4) */
	uint32_t rcc[0x90 / 4];
	uint32_t sysclk_source;   /* RCC_CFGR.SWS: SW once the source it selects is ready */
	bool hse_absent;          /* the HSE never starts */
	uint32_t pwr[2];
	struct art art;           /* the FLASH interface's ACR and its accelerator */
	uint64_t hclk;            /* core clock as RCC is set up */
	uint32_t gpioa[0x28 / 4];
	uint32_t usart[0x1c / 4];
	unsigned rx_idle_polls;   /* SR reads in a row that found no input */
	uint32_t rng_cr;
	uint64_t rng_state;       /* the RNG's numbers: xorshift64, the same on every start */

	/* SCB */
	uint32_t vtor, ccr, cpacr, scr, shpr[3], fpccr, fpcar, fpdscr, demcr;

	/* SysTick: the counter is 0 at time st_anchor and reloads every st_reload+1 cycles */
	uint32_t st_csr, st_reload, st_frozen;
	uint64_t st_anchor, st_next_tick;
	bool st_pending;          /* SysTick exception pending */

	/* DWT: CYCCNT = dwt_base + (now - dwt_since) while counting */
	uint32_t dwt_ctrl, dwt_base;
	uint64_t dwt_since;
	/* --cycle-jitter: every read of a cycle counter is late by 0..jitter cycles (xorshift64) */
	uint32_t jitter;
	uint64_t jitter_state;
};

static void fail(struct periph *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct periph *p, const char *fmt, ...)
{
	char message[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	p->core.fail(p->core.core, message);
}

static bool access_time(struct periph *p, uint64_t *now)
{
	return p->core.access_time(p->core.core, now);
}

static void unsupported(struct periph *p, const char *dir, enum window w, uint32_t off)
{
	fail(p, "%s unsupported register %s+0x%03x at address 0x%08x", dir, periph_windows[w].name,
	     off, periph_windows[w].base + off);
}

/* ---- RCC ---- */

/* RCC_CR's ready bits: an oscillator is ready as soon as it is switched on (unless it is an absent
 * HSE), a PLL once its input is. */
static uint32_t rcc_ready(const struct periph *p)
{
	uint32_t cr = p->rcc[RCC_CR / 4];
	bool hsi = cr & RCC_CR_HSION, hse = (cr & RCC_CR_HSEON) && !p->hse_absent;
	bool pll_input = (p->rcc[RCC_PLLCFGR / 4] & PLLCFGR_PLLSRC_HSE) ? hse : hsi;
	return (hsi ? RCC_CR_HSIRDY : 0) | (hse ? RCC_CR_HSERDY : 0) |
	       ((cr & RCC_CR_PLLON) && pll_input ? RCC_CR_PLLRDY : 0) |
	       ((cr & RCC_CR_PLLI2SON) && pll_input ? RCC_CR_PLLI2SRDY : 0);
}

/* The system clock switches to the source RCC_CFGR.SW selects once that source is ready
 * (RM0090 section 6.2.6). */
static void rcc_switch_sysclk(struct periph *p)
{
	static const uint32_t ready_bit[4] = {RCC_CR_HSIRDY, RCC_CR_HSERDY, RCC_CR_PLLRDY, 0};
	uint32_t wanted = p->rcc[RCC_CFGR / 4] & 3u;
	if (rcc_ready(p) & ready_bit[wanted])
		p->sysclk_source = wanted;
}

static uint32_t rcc_read(struct periph *p, uint32_t off)
{
	if (off >= sizeof p->rcc) {
		unsupported(p, "read from", WIN_RCC, off);
		return 0;
	}
	uint32_t v = p->rcc[off / 4];
	if (off == RCC_CR)
		v = (v & ~RCC_CR_READY) | rcc_ready(p);
	if (off == RCC_CFGR)
		v = (v & ~0xcu) | p->sysclk_source << 2;
	return v;
}

static uint64_t rcc_hclk(const struct periph *p)
{
	uint32_t cfgr = p->rcc[RCC_CFGR / 4];
	uint32_t pll = p->rcc[RCC_PLLCFGR / 4];
	uint64_t sysclk = HSI_HZ;
	if (p->sysclk_source == 1u) {
		sysclk = HSE_HZ;
	} else if (p->sysclk_source == 2u) {
		uint32_t pllm = pll & 0x3f, plln = pll >> 6 & 0x1ff, pllp = ((pll >> 16 & 3) + 1) * 2;
		uint64_t src = (pll & PLLCFGR_PLLSRC_HSE) ? HSE_HZ : HSI_HZ;
		sysclk = pllm ? src / pllm * plln / pllp : 0;
	}
	uint32_t hpre = cfgr >> 4 & 0xf;
	uint32_t ahb_div = hpre < 8 ? 1 : (hpre < 12 ? 2u << (hpre - 8) : 64u << (hpre - 12));
	return sysclk / ahb_div;
}

/* The flash needs more wait states the faster HCLK runs (RM0090 table 10); with too few the chip
 * would read wrong instructions. */
static void check_flash_timing(struct periph *p, uint32_t reg_addr)
{
	unsigned needed = art_required_wait_states(p->hclk);
	if (art_wait_states(&p->art) < needed)
		fail(p, "%u flash wait states at HCLK %llu Hz; RM0090 table 10 needs %u at 2.7-3.6 V "
			"at address 0x%08x", art_wait_states(&p->art), (unsigned long long)p->hclk,
		     needed, reg_addr);
}

static void rcc_check_sysclk(struct periph *p)
{
	uint64_t hclk = rcc_hclk(p);
	if (hclk == p->hclk)
		return;
	p->hclk = hclk;
	if (hclk > HCLK_MAX_HZ)
		fail(p, "core clock set to %llu Hz, above the STM32F407's %u Hz at address 0x%08x",
		     (unsigned long long)hclk, HCLK_MAX_HZ, periph_windows[WIN_RCC].base + RCC_CFGR);
	else
		check_flash_timing(p, periph_windows[WIN_RCC].base + RCC_CFGR);
}

static void rcc_write(struct periph *p, uint32_t off, uint32_t v)
{
	switch (off) {
	case 0x00: case 0x04: case 0x08: case 0x0c: case 0x10: case 0x14: case 0x18: case 0x20:
	case 0x24: case 0x30: case 0x34: case 0x38: case 0x40: case 0x44: case 0x50: case 0x54:
	case 0x58: case 0x60: case 0x64: case 0x70: case 0x74: case 0x80: case 0x84:
		p->rcc[off / 4] = v;
		if (off == RCC_CR || off == RCC_CFGR || off == RCC_PLLCFGR) {
			rcc_switch_sysclk(p);
			rcc_check_sysclk(p);
		}
		return;
	}
	unsupported(p, "write to", WIN_RCC, off);
}

/* ---- PWR, FLASH interface, GPIOA: plain register files behind their clock gates ---- */

static bool clocked(struct periph *p, enum window w, uint32_t off, uint32_t enr, uint32_t bit,
		    const char *bitname)
{
	if (p->rcc[enr / 4] & bit)
		return true;
	fail(p, "access to %s with its clock disabled (RCC %s=0) at address 0x%08x",
	     periph_windows[w].name, bitname, periph_windows[w].base + off);
	return false;
}

static uint32_t pwr_read(struct periph *p, uint32_t off)
{
	if (!clocked(p, WIN_PWR, off, RCC_APB1ENR, APB1ENR_PWR, "PWREN"))
		return 0;
	if (off == 0x00)
		return p->pwr[0];
	if (off == 0x04)
		return p->pwr[1] | 1u << 14; /* VOSRDY */
	unsupported(p, "read from", WIN_PWR, off);
	return 0;
}

static void pwr_write(struct periph *p, uint32_t off, uint32_t v)
{
	if (!clocked(p, WIN_PWR, off, RCC_APB1ENR, APB1ENR_PWR, "PWREN"))
		return;
	if (off <= 0x04)
		p->pwr[off / 4] = v;
	else
		unsupported(p, "write to", WIN_PWR, off);
}

static uint32_t flash_read(struct periph *p, uint32_t off)
{
	if (off == 0x00)
		return p->art.acr;
	unsupported(p, "read from", WIN_FLASH, off);
	return 0;
}

static void flash_write(struct periph *p, uint32_t off, uint32_t v)
{
	if (off != 0x00) {
		unsupported(p, "write to", WIN_FLASH, off);
		return;
	}
	art_set_acr(&p->art, v);
	check_flash_timing(p, periph_windows[WIN_FLASH].base);
	p->core.reschedule(p->core.core); /* the core prices flash accesses by the new setting */
}

static uint32_t gpioa_read(struct periph *p, uint32_t off)
{
	if (!clocked(p, WIN_GPIOA, off, RCC_AHB1ENR, AHB1ENR_GPIOA, "GPIOAEN"))
		return 0;
	if (off < 0x28 && off != 0x18)
		return p->gpioa[off / 4];
	unsupported(p, "read from", WIN_GPIOA, off);
	return 0;
}

static void gpioa_write(struct periph *p, uint32_t off, uint32_t v)
{
	if (!clocked(p, WIN_GPIOA, off, RCC_AHB1ENR, AHB1ENR_GPIOA, "GPIOAEN"))
		return;
	if (off == 0x18) { /* BSRR: set/reset bits of ODR */
		p->gpioa[0x14 / 4] = (p->gpioa[0x14 / 4] | (v & 0xffff)) & ~(v >> 16);
		return;
	}
	if (off < 0x28 && off != 0x10 && off != 0x1c)
		p->gpioa[off / 4] = v;
	else
		unsupported(p, "write to", WIN_GPIOA, off);
}

/* ---- USART2 ---- */

static uint32_t usart_read(struct periph *p, uint32_t off)
{
	if (!clocked(p, WIN_USART2, off, RCC_APB1ENR, APB1ENR_USART2, "USART2EN"))
		return 0;
	if (off == USART_SR) {
		if (!uart_rx_ready(p->uart) && ++p->rx_idle_polls >= RX_IDLE_POLLS) {
			uint32_t cr1 = p->usart[USART_CR1 / 4];
			if ((cr1 & (CR1_UE | CR1_RE)) != (CR1_UE | CR1_RE)) {
				fail(p, "firmware waits for USART2 input with the receiver disabled "
					"(CR1=0x%04x) at address 0x%08x", cr1,
				     periph_windows[WIN_USART2].base + off);
				return 0;
			}
			/* Blocking here keeps model time still while the host is silent. */
			switch (uart_wait_input(p->uart, p->core.interrupted)) {
			case UART_WAIT_DATA:
				break;
			case UART_WAIT_EOF:
				p->core.stop(p->core.core, PERIPH_STOP_INPUT_EOF);
				return 0;
			case UART_WAIT_INTERRUPTED:
				p->core.stop(p->core.core, PERIPH_STOP_INTERRUPTED);
				return 0;
			}
		}
		uint32_t sr = p->usart[USART_SR / 4] | SR_TXE | SR_TC;
		return uart_rx_ready(p->uart) ? sr | SR_RXNE : sr & ~SR_RXNE;
	}
	if (off == USART_DR) {
		p->rx_idle_polls = 0;
		return uart_rx_ready(p->uart) ? uart_rx_pop(p->uart) : 0;
	}
	if (off < 0x1c)
		return p->usart[off / 4];
	unsupported(p, "read from", WIN_USART2, off);
	return 0;
}

static void usart_write(struct periph *p, uint32_t off, uint32_t v)
{
	if (!clocked(p, WIN_USART2, off, RCC_APB1ENR, APB1ENR_USART2, "USART2EN"))
		return;
	if (off == USART_DR) {
		uint32_t cr1 = p->usart[USART_CR1 / 4];
		if ((cr1 & (CR1_UE | CR1_TE)) != (CR1_UE | CR1_TE)) {
			fail(p, "USART2 transmit with the transmitter disabled (CR1=0x%04x) at address "
				"0x%08x", cr1, periph_windows[WIN_USART2].base + off);
			return;
		}
		p->rx_idle_polls = 0;
		uart_put(p->uart, (uint8_t)v);
		return;
	}
	if (off == USART_SR)
		return; /* rc_w0 flags: TC and RXNE are derived, nothing to clear */
	if (off < 0x1c)
		p->usart[off / 4] = v;
	else
		unsupported(p, "write to", WIN_USART2, off);
}

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

bool periph_systick_pending(const struct periph *p)
{
	return p->st_pending;
}

void periph_systick_taken(struct periph *p)
{
	p->st_pending = false;
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

static uint32_t cycle_jitter(struct periph *p)
{
	if (!p->jitter)
		return 0;
	uint64_t x = p->jitter_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	p->jitter_state = x;
	return (uint32_t)(x % ((uint64_t)p->jitter + 1));
}

static uint32_t scs_read(struct periph *p, uint32_t off)
{
	uint64_t now;
	switch (off) {
	case STK_CSR: case STK_RVR: case STK_CVR: case SCB_DEMCR:
		if (!access_time(p, &now))
			return 0;
		periph_systick_advance(p, now);
		if (off == STK_CSR) {
			uint32_t v = p->st_csr;
			p->st_csr &= ~CSR_COUNTFLAG;
			return v;
		}
		if (off == STK_RVR)
			return p->st_reload;
		if (off == STK_CVR) { /* read late by the jitter: it counts down */
			uint32_t value = systick_value(p, now), late = cycle_jitter(p);
			return value > late ? value - late : 0;
		}
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
	unsupported(p, "read from", WIN_SCS, off);
	return 0;
}

static void scs_write(struct periph *p, uint32_t off, uint32_t v)
{
	uint64_t now;
	switch (off) {
	case STK_CSR: case STK_RVR: case STK_CVR: case SCB_DEMCR:
		if (!access_time(p, &now))
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
				fail(p, "SysTick on the external reference clock is not modelled at "
					"address 0x%08x", periph_windows[WIN_SCS].base + off);
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
		p->core.reschedule(p->core.core);
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
	unsupported(p, "write to", WIN_SCS, off);
}

static uint32_t dwt_read(struct periph *p, uint32_t off)
{
	uint64_t now;
	if (off == DWT_CTRL)
		return DWT_CTRL_NUMCOMP | p->dwt_ctrl;
	if (off == DWT_CYCCNT) {
		if (!access_time(p, &now))
			return 0;
		return dwt_cyccnt(p, now) + cycle_jitter(p);
	}
	unsupported(p, "read from", WIN_DWT, off);
	return 0;
}

static void dwt_write(struct periph *p, uint32_t off, uint32_t v)
{
	uint64_t now;
	if (off != DWT_CTRL && off != DWT_CYCCNT) {
		unsupported(p, "write to", WIN_DWT, off);
		return;
	}
	if (!access_time(p, &now))
		return;
	p->dwt_base = off == DWT_CYCCNT ? v : dwt_cyccnt(p, now);
	p->dwt_since = now;
	if (off == DWT_CTRL)
		p->dwt_ctrl = v & DWT_CTRL_CYCCNTENA;
}

/* ---- RNG: a number ready at every read once enabled. The real one makes a number every 40
 * PLL48CLK periods (RM0090 24.3.1): 20 HCLK cycles at 24 MHz, fewer than a read loop takes
 * (libopencm3's rng_get_random_blocking), so no read waits there; at 168 MHz (140 cycles) reads
 * in a row would wait on the real one, not here. Only pqm4's own images use it. ---- */

static uint32_t rng_read(struct periph *p, uint32_t off)
{
	if (!clocked(p, WIN_RNG, off, RCC_AHB2ENR, AHB2ENR_RNG, "RNGEN"))
		return 0;
	if (off == RNG_CR)
		return p->rng_cr;
	bool ready = p->rng_cr & RNG_CR_RNGEN;
	if (off == RNG_SR)
		return ready ? RNG_SR_DRDY : 0;
	if (off != RNG_DR) {
		unsupported(p, "read from", WIN_RNG, off);
		return 0;
	}
	if (!ready)
		return 0;
	p->rng_state ^= p->rng_state << 13;
	p->rng_state ^= p->rng_state >> 7;
	p->rng_state ^= p->rng_state << 17;
	return (uint32_t)(p->rng_state >> 32);
}

static void rng_write(struct periph *p, uint32_t off, uint32_t v)
{
	if (!clocked(p, WIN_RNG, off, RCC_AHB2ENR, AHB2ENR_RNG, "RNGEN"))
		return;
	if (off == RNG_SR) /* the error flags are cleared by writing 0; this RNG raises none */
		return;
	if (off != RNG_CR) {
		unsupported(p, "write to", WIN_RNG, off);
		return;
	}
	if (v & RNG_CR_IE) {
		fail(p, "RNG interrupts are not emulated (RNG_CR=0x%08x) at address 0x%08x", v,
		     periph_windows[WIN_RNG].base + off);
		return;
	}
	p->rng_cr = v;
}

/* ---- the windows' access rules ---- */

static const struct {
	uint32_t (*read)(struct periph *p, uint32_t off);
	void (*write)(struct periph *p, uint32_t off, uint32_t value);
} handlers[PERIPH_WINDOWS] = {
	[WIN_RCC] = {rcc_read, rcc_write},
	[WIN_PWR] = {pwr_read, pwr_write},
	[WIN_FLASH] = {flash_read, flash_write},
	[WIN_GPIOA] = {gpioa_read, gpioa_write},
	[WIN_USART2] = {usart_read, usart_write},
	[WIN_RNG] = {rng_read, rng_write},
	[WIN_SCS] = {scs_read, scs_write},
	[WIN_DWT] = {dwt_read, dwt_write},
};

/* The window holding `addr` for an access of `size` bytes, or -1 after failing. */
static int window_of(struct periph *p, uint32_t addr, unsigned size, const char *dir)
{
	for (int w = 0; w < PERIPH_WINDOWS; w++) {
		uint32_t off = addr - periph_windows[w].base;
		if (addr < periph_windows[w].base || off >= periph_windows[w].size)
			continue;
		if (size == 4 && !(off & 3))
			return w;
		fail(p, "%u-byte %s %s+0x%03x (only aligned 32-bit accesses are supported) at "
			"address 0x%08x", size, dir, periph_windows[w].name, off, addr);
		return -1;
	}
	fail(p, "%s address 0x%08x outside the peripherals", dir, addr);
	return -1;
}

uint32_t periph_read(struct periph *p, uint32_t addr, unsigned size)
{
	int w = window_of(p, addr, size, "read from");
	return w < 0 ? 0 : handlers[w].read(p, addr - periph_windows[w].base);
}

void periph_write(struct periph *p, uint32_t addr, unsigned size, uint32_t value)
{
	int w = window_of(p, addr, size, "write to");
	if (w >= 0)
		handlers[w].write(p, addr - periph_windows[w].base, value);
}

struct periph *periph_new(const struct periph_core *core, struct uart_host *uart)
{
	struct periph *p = calloc(1, sizeof *p);
	p->core = *core;
	p->uart = uart;
	p->rcc[RCC_CR / 4] = 0x83;            /* HSION, HSITRIM */
	p->hclk = HSI_HZ;
	art_reset(&p->art);
	p->rcc[RCC_PLLCFGR / 4] = 0x24003010;
	p->pwr[0] = 0x4000;
	p->gpioa[0] = 0xa8000000;             /* debug pins in AF mode */
	p->gpioa[0x08 / 4] = 0x0c000000;
	p->gpioa[0x0c / 4] = 0x64000000;
	p->usart[USART_SR / 4] = SR_TXE | SR_TC;
	p->rng_state = 0x9e3779b97f4a7c15ull;
	p->ccr = CCR_STKALIGN;
	p->fpccr = 0xc0000000;                /* ASPEN, LSPEN */
	return p;
}

void periph_remove_hse(struct periph *p)
{
	p->hse_absent = true;
}

void periph_set_cycle_jitter(struct periph *p, uint32_t max, uint64_t seed)
{
	p->jitter = max;
	p->jitter_state = seed | 1; /* xorshift64 never leaves 0 */
}

void periph_free(struct periph *p)
{
	free(p);
}

uint32_t periph_vector_table(const struct periph *p)
{
	return p->vtor;
}

bool periph_stack_align8(const struct periph *p)
{
	return p->ccr & CCR_STKALIGN;
}

uint32_t periph_cpacr(const struct periph *p)
{
	return p->cpacr;
}

struct art *periph_flash_art(struct periph *p)
{
	return &p->art;
}

uint64_t periph_hclk(const struct periph *p)
{
	return p->hclk;
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
