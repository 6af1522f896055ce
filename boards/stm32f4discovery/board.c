/* STM32F4 Discovery (STM32F407VG) implementation of the pqscope board interface, on libopencm3.
 * Clocks as pqm4 benchmarks them: 24 MHz through the PLL, with 0 flash wait states so that flash
 * fetches cost no extra cycles (PQSCOPE_CLOCK_FAST selects 168 MHz). The PLL runs from the 8 MHz
 * HSE (on the Discovery, the ST-LINK's MCO output) or, if that does not start, from the 16 MHz HSI
 * at the same frequency. */
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

/* Polls of a ready flag before the bring-up gives up on it: at least 4 cycles each at the 16 MHz
 * HSI the chip resets to, so at least 125 ms, far beyond the HSE's 2 ms start-up and the PLL's
 * 0.1 ms lock (datasheet DS8626, tables 33 and 38). */
#define READY_POLLS 500000u
#define HSI_HZ 16000000u

#ifndef PQSCOPE_CLOCK_FAST
/* 1 MHz into the VCO from either oscillator, 192 MHz out, SYSCLK = 24 MHz: low enough for 0 flash
 * wait states, 48 MHz for USB/RNG. */
#define BENCHMARK_CLOCK(source, input_mhz)                                                         \
  {                                                                                                \
    .pllm = (input_mhz), .plln = 192, .pllp = 8, .pllq = 4, .pllr = 0, .pll_source = (source),     \
    .hpre = RCC_CFGR_HPRE_DIV_NONE, .ppre1 = RCC_CFGR_PPRE_DIV_2, .ppre2 = RCC_CFGR_PPRE_DIV_NONE, \
    .voltage_scale = PWR_SCALE1,                                                                   \
    .flash_config = FLASH_ACR_DCEN | FLASH_ACR_ICEN | FLASH_ACR_LATENCY_0WS,                       \
    .ahb_frequency = 24000000, .apb1_frequency = 12000000, .apb2_frequency = 24000000,             \
  }
static const struct rcc_clock_scale clock_from_hse = BENCHMARK_CLOCK(RCC_CFGR_PLLSRC_HSE_CLK, 8);
static const struct rcc_clock_scale clock_from_hsi = BENCHMARK_CLOCK(RCC_CFGR_PLLSRC_HSI_CLK, 16);
#else
#define clock_from_hse (rcc_hse_8mhz_3v3[RCC_CLOCK_3V3_168MHZ])
#define clock_from_hsi (rcc_hsi_configs[RCC_CLOCK_3V3_168MHZ])
#endif

static const char *clock_source = "HSE";
static const char *clock_fallback_reason = "";

static bool hse_ready(void)
{
  return rcc_is_osc_ready(RCC_HSE);
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

/* The PLL failed: go on from the HSI the chip reset to, undivided, and say why. */
static void stay_on_hsi(const char *reason)
{
  rcc_set_sysclk_source(RCC_CFGR_SW_HSI);
  rcc_osc_off(RCC_PLL);
  rcc_set_hpre(RCC_CFGR_HPRE_DIV_NONE);
  rcc_set_ppre1(RCC_CFGR_PPRE_DIV_NONE);
  rcc_set_ppre2(RCC_CFGR_PPRE_DIV_NONE);
  rcc_ahb_frequency = rcc_apb1_frequency = rcc_apb2_frequency = HSI_HZ;
  clock_source = "HSI";
  clock_fallback_reason = reason;
}

/* libopencm3's rcc_clock_setup_pll with every wait bounded: a board whose HSE does not start (an
 * ST-LINK without MCO, a board without crystal) must boot and say so rather than hang unseen. */
static void clock_setup(void)
{
  const struct rcc_clock_scale *clock = &clock_from_hse;
  rcc_osc_on(RCC_HSE); /* the core runs from the HSI since reset */
  if (!holds_within_bound(hse_ready)) {
    rcc_osc_off(RCC_HSE);
    clock = &clock_from_hsi;
    clock_source = "HSI";
    clock_fallback_reason = "HSE did not start";
  }
  rcc_periph_clock_enable(RCC_PWR);
  pwr_set_vos_scale(clock->voltage_scale);
  rcc_set_hpre(clock->hpre);
  rcc_set_ppre1(clock->ppre1);
  rcc_set_ppre2(clock->ppre2);
  rcc_osc_off(RCC_PLL);
  if (clock->pll_source == RCC_CFGR_PLLSRC_HSE_CLK) {
    rcc_set_main_pll_hse(clock->pllm, clock->plln, clock->pllp, clock->pllq, clock->pllr);
  } else {
    rcc_set_main_pll_hsi(clock->pllm, clock->plln, clock->pllp, clock->pllq, clock->pllr);
  }
  rcc_osc_on(RCC_PLL);
  if (!holds_within_bound(pll_locked)) {
    stay_on_hsi("the PLL did not lock");
    return;
  }
  /* Caches and wait states for the new clock before switching to it (RM0090 section 3.5.1). */
  if (clock->flash_config & FLASH_ACR_DCEN) {
    flash_dcache_enable();
  } else {
    flash_dcache_disable();
  }
  if (clock->flash_config & FLASH_ACR_ICEN) {
    flash_icache_enable();
  } else {
    flash_icache_disable();
  }
  flash_set_ws(clock->flash_config);
  rcc_set_sysclk_source(RCC_CFGR_SW_PLL);
  if (!holds_within_bound(pll_selected)) {
    stay_on_hsi("the PLL was not selected");
    return;
  }
  rcc_ahb_frequency = clock->ahb_frequency;
  rcc_apb1_frequency = clock->apb1_frequency;
  rcc_apb2_frequency = clock->apb2_frequency;
  if (clock->pll_source == RCC_CFGR_PLLSRC_HSE_CLK) {
    rcc_osc_off(RCC_HSI);
  }
}

static void uart_setup(void)
{
  rcc_periph_clock_enable(RCC_GPIOA);
  rcc_periph_clock_enable(RCC_USART2);
  /* PA2 = USART2_TX, PA3 = USART2_RX (AF7), with pull-ups so a floating RX reads idle. */
  gpio_mode_setup(GPIOA, GPIO_MODE_AF, GPIO_PUPD_PULLUP, GPIO2 | GPIO3);
  gpio_set_af(GPIOA, GPIO_AF7, GPIO2 | GPIO3);
  usart_set_baudrate(USART2, PQSCOPE_UART_BAUD);
  usart_set_databits(USART2, 8);
  usart_set_stopbits(USART2, USART_STOPBITS_1);
  usart_set_parity(USART2, USART_PARITY_NONE);
  usart_set_flow_control(USART2, USART_FLOWCONTROL_NONE);
  usart_set_mode(USART2, USART_MODE_TX_RX);
  usart_enable(USART2);
}

void hal_setup(void)
{
  clock_setup();
  flash_prefetch_enable();
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
  usart_send_blocking(USART2, byte);
}

uint8_t hal_getc(void)
{
  /* An overrun (a byte lost while the core was busy) must not wedge the receiver; the protocol's
   * CRC and resend recover the lost frame. */
  while (!(USART_SR(USART2) & USART_SR_RXNE)) {
    if (USART_SR(USART2) & USART_SR_ORE) {
      (void)USART_DR(USART2);
    }
  }
  return (uint8_t)USART_DR(USART2);
}

const char *hal_board_name(void)
{
  return "stm32f4discovery";
}

/* The chip's 96-bit unique ID (RM0090 section 39.1) as 24 hex digits, its highest word first. */
const char *hal_board_serial(void)
{
  return board_serial_from_unique_id(DESIG_UNIQUE_ID_BASE);
}
