/* NUCLEO-L4R5ZI (STM32L4R5ZI) implementation of the pqscope board interface, on libopencm3.
 * Clocks as pqm4 benchmarks them (its common/hal-opencm3.c): 20 MHz from the 16 MHz HSI16 through
 * the PLL (/1, x10, /8), 0 flash wait states, the flash instruction and data caches and prefetch
 * on; PQSCOPE_CLOCK_FAST selects 120 MHz (x15, /2) with 5 wait states in range 1 boost mode. The
 * HSI16 is the source, as in pqm4: the chip's own oscillator, which needs nothing on the board
 * (no crystal, no solder bridge for the ST-LINK's clock output). If the PLL fails, the core stays
 * on the HSI16 undivided and says so.
 * No hardware RNG: the harness's randomness is a seeded DRBG, so that every sample replays. */
#include <pqscope/hal.h>

#include <stdbool.h>

#include <libopencm3/stm32/desig.h>
#include <libopencm3/stm32/flash.h>
#include <libopencm3/stm32/gpio.h>
#include <libopencm3/stm32/pwr.h>
#include <libopencm3/stm32/rcc.h>
#include <libopencm3/stm32/usart.h>

#include "../common/cortex_m4.h"

#ifndef PQSCOPE_UART_BAUD
#define PQSCOPE_UART_BAUD 115200
#endif

/* Polls of a ready flag before the bring-up gives up on it: at least 4 cycles each at the 4 MHz
 * MSI the chip resets to, so at least 500 ms, far beyond the HSI16's start-up (microseconds) and
 * the PLL's lock (tens of microseconds) in the datasheet (DS12023). */
#define READY_POLLS 500000u
#define MSI_RESET_HZ 4000000u
#define HSI16_HZ 16000000u

#ifndef PQSCOPE_CLOCK_FAST
/* VCO 16 MHz x 10 = 160 MHz, PLLCLK (R) = /8 = 20 MHz: 0 wait states suffice up to 20 MHz in
 * range 1 (RM0432 3.3.3, the table of wait states by HCLK). */
#define CLOCK_HZ 20000000u
#define PLL_N 10u
#define PLL_R RCC_PLLCFGR_PLLR_DIV8
#define FLASH_WAIT_STATES FLASH_ACR_LATENCY_0WS
#else
/* VCO 16 MHz x 15 = 240 MHz, PLLCLK (R) = /2 = 120 MHz: above 80 MHz the regulator must be in
 * range 1 boost mode (RM0432 5.1.8), and above 100 MHz the flash needs 5 wait states. */
#define CLOCK_HZ 120000000u
#define PLL_N 15u
#define PLL_R RCC_PLLCFGR_PLLR_DIV2
#define FLASH_WAIT_STATES 5u
/* PWR_CR5 (offset 0x80), which libopencm3 does not name: R1MODE = 0 is range 1 boost mode. */
#define PWR_CR5 MMIO32(POWER_CONTROL_BASE + 0x80)
#define PWR_CR5_R1MODE (1u << 8)
/* Iterations to wait after switching to the PLL before HCLK may be undivided: at least 1 us
 * (RM0432 5.1.8); each takes more than one cycle of the halved 60 MHz HCLK, so at least 2 us. */
#define BOOST_SETTLE_LOOPS 120u
#endif

static const char *clock_source = "HSI16";
static const char *clock_fallback_reason = "";

static bool hsi16_ready(void)
{
  return rcc_is_osc_ready(RCC_HSI16);
}

static bool pll_locked(void)
{
  return rcc_is_osc_ready(RCC_PLL);
}

static bool pll_selected(void)
{
  return rcc_system_clock_source() == RCC_CFGR_SWS_PLL;
}

static bool holds_within_bound(bool (*condition)(void))
{
  for (uint32_t poll = 0; poll < READY_POLLS; poll++) {
    if (condition()) {
      return true;
    }
  }
  return false;
}

static void set_bus_frequencies(uint32_t hz)
{
  rcc_ahb_frequency = rcc_apb1_frequency = rcc_apb2_frequency = hz;
}

/* The PLL failed: go on from the HSI16, undivided (0 wait states suffice at 16 MHz), and say why. */
static void stay_on_hsi16(const char *reason)
{
  rcc_set_sysclk_source(RCC_CFGR_SW_HSI16);
  rcc_osc_off(RCC_PLL);
  rcc_set_hpre(RCC_CFGR_HPRE_NODIV);
  flash_set_ws(FLASH_ACR_LATENCY_0WS);
  set_bus_frequencies(HSI16_HZ);
  clock_fallback_reason = reason;
}

/* pqm4's bring-up, with every wait bounded: a board whose oscillator or PLL does not start must
 * boot and say so rather than hang unseen. */
static void clock_setup(void)
{
  /* The regulator stays in range 1 (normal mode), its reset state, which pqm4 sets again. */
  rcc_periph_clock_enable(RCC_PWR);
  rcc_osc_on(RCC_HSI16); /* the core runs from the MSI since reset */
  if (!holds_within_bound(hsi16_ready)) {
    clock_source = "MSI";
    clock_fallback_reason = "HSI16 did not start";
    set_bus_frequencies(MSI_RESET_HZ);
    return;
  }
  rcc_set_hpre(RCC_CFGR_HPRE_NODIV);
  rcc_set_ppre1(RCC_CFGR_PPRE_NODIV);
  rcc_set_ppre2(RCC_CFGR_PPRE_NODIV);
  /* M = 1 (16 MHz into the VCO, the most it takes); only the R output (the system clock) is on. */
  rcc_set_main_pll(RCC_PLLCFGR_PLLSRC_HSI16, 1, PLL_N, RCC_PLLCFGR_PLLP_DIV7, RCC_PLLCFGR_PLLQ_DIV2, PLL_R);
  rcc_osc_on(RCC_PLL);
  if (!holds_within_bound(pll_locked)) {
    stay_on_hsi16("the PLL did not lock");
    return;
  }
#ifdef PQSCOPE_CLOCK_FAST
  /* Into boost mode with HCLK halved across the switch (RM0432 5.1.8). */
  rcc_set_hpre(RCC_CFGR_HPRE_DIV2);
  PWR_CR5 &= ~PWR_CR5_R1MODE;
#endif
  /* Caches and wait states for the new clock before switching to it (RM0432 3.3.3). */
  flash_dcache_enable();
  flash_icache_enable();
  flash_set_ws(FLASH_WAIT_STATES);
  flash_prefetch_enable();
  rcc_set_sysclk_source(RCC_CFGR_SW_PLL);
  if (!holds_within_bound(pll_selected)) {
    stay_on_hsi16("the PLL was not selected");
    return;
  }
#ifdef PQSCOPE_CLOCK_FAST
  for (volatile uint32_t loop = 0; loop < BOOST_SETTLE_LOOPS; loop++) {
  }
  rcc_set_hpre(RCC_CFGR_HPRE_NODIV);
#endif
  set_bus_frequencies(CLOCK_HZ);
}

static void uart_setup(void)
{
  /* LPUART1 on PG7 (TX) and PG8 (RX), AF8: the ST-LINK's virtual COM port. Port G is powered from
   * VDDIO2, which must be declared valid first (PWR_CR2 IOSV). */
  PWR_CR2 |= PWR_CR2_IOSV;
  rcc_periph_clock_enable(RCC_GPIOG);
  rcc_periph_clock_enable(RCC_LPUART1);
  /* Pull-ups so that a floating RX reads idle. */
  gpio_mode_setup(GPIOG, GPIO_MODE_AF, GPIO_PUPD_PULLUP, GPIO7 | GPIO8);
  gpio_set_af(GPIOG, GPIO_AF8, GPIO7 | GPIO8);
  usart_set_baudrate(LPUART1, PQSCOPE_UART_BAUD); /* from PCLK1, LPUART1's clock since reset */
  usart_set_databits(LPUART1, 8);
  usart_set_stopbits(LPUART1, USART_STOPBITS_1);
  usart_set_parity(LPUART1, USART_PARITY_NONE);
  usart_set_flow_control(LPUART1, USART_FLOWCONTROL_NONE);
  usart_set_mode(LPUART1, USART_MODE_TX_RX);
  usart_enable(LPUART1);
}

void hal_setup(void)
{
  clock_setup();
  uart_setup();
  board_cycle_counter_setup();
}

uint32_t hal_clock_hz(void)
{
  return rcc_ahb_frequency;
}

const char *hal_clock_source(void)
{
  return clock_source;
}

const char *hal_clock_fallback_reason(void)
{
  return clock_fallback_reason;
}

void hal_putc(uint8_t byte)
{
  usart_send_blocking(LPUART1, byte);
}

uint8_t hal_getc(void)
{
  /* An overrun (a byte lost while the core was busy) must not wedge the receiver: unlike the
   * STM32F4's USART, this one keeps ORE until it is cleared in ICR. The protocol's CRC and resend
   * recover the lost frame. */
  while (!(USART_ISR(LPUART1) & USART_ISR_RXNE)) {
    if (USART_ISR(LPUART1) & USART_ISR_ORE) {
      USART_ICR(LPUART1) = USART_ICR_ORECF;
    }
  }
  return (uint8_t)USART_RDR(LPUART1);
}

const char *hal_board_name(void)
{
  return "nucleo-l4r5zi";
}

/* The chip's 96-bit unique ID (RM0432, device electronic signature), at 0x1FFF7590. */
const char *hal_board_serial(void)
{
  return board_serial_from_unique_id(DESIG_UNIQUE_ID_BASE);
}
