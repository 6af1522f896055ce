/* STM32F4 Discovery (STM32F407VG) implementation of the pqscope board interface, on libopencm3.
 * Clocks as pqm4 benchmarks them: 24 MHz from the 8 MHz HSE through the PLL, with 0 flash wait
 * states so that flash fetches cost no extra cycles (PQSCOPE_CLOCK_FAST selects 168 MHz). */
#include <pqscope/fault.h>
#include <pqscope/hal.h>

#include <libopencm3/cm3/cortex.h>
#include <libopencm3/cm3/systick.h>
#include <libopencm3/stm32/desig.h>
#include <libopencm3/stm32/flash.h>
#include <libopencm3/stm32/gpio.h>
#include <libopencm3/stm32/rcc.h>
#include <libopencm3/stm32/usart.h>

#ifndef PQSCOPE_UART_BAUD
#define PQSCOPE_UART_BAUD 115200
#endif

#define SYSTICK_RELOAD 0xFFFFFFu /* the full 24-bit range: one interrupt per 2^24 cycles */

#ifndef PQSCOPE_CLOCK_FAST
static const struct rcc_clock_scale benchmark_clock = {
  .pllm = 8,   /* VCO in  = 8 MHz HSE / 8 = 1 MHz */
  .plln = 192, /* VCO out = 192 MHz */
  .pllp = 8,   /* SYSCLK  = 24 MHz: low enough for 0 flash wait states */
  .pllq = 4,   /* 48 MHz for USB/RNG */
  .pllr = 0,
  .pll_source = RCC_CFGR_PLLSRC_HSE_CLK,
  .hpre = RCC_CFGR_HPRE_DIV_NONE,
  .ppre1 = RCC_CFGR_PPRE_DIV_2,
  .ppre2 = RCC_CFGR_PPRE_DIV_NONE,
  .voltage_scale = PWR_SCALE1,
  .flash_config = FLASH_ACR_DCEN | FLASH_ACR_ICEN | FLASH_ACR_LATENCY_0WS,
  .ahb_frequency = 24000000,
  .apb1_frequency = 12000000,
  .apb2_frequency = 24000000,
};
#define BOARD_CLOCK (&benchmark_clock)
#else
#define BOARD_CLOCK (&rcc_hse_8mhz_3v3[RCC_CLOCK_3V3_168MHZ])
#endif

static volatile uint64_t systick_wraps;

void sys_tick_handler(void)
{
  systick_wraps++;
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

static void cycle_counter_setup(void)
{
  systick_set_clocksource(STK_CSR_CLKSOURCE_AHB);
  systick_set_reload(SYSTICK_RELOAD);
  systick_clear();
  systick_interrupt_enable();
  systick_counter_enable();
}

void hal_setup(void)
{
  rcc_clock_setup_pll(BOARD_CLOCK);
  flash_prefetch_enable();
  uart_setup();
  cycle_counter_setup();
}

uint32_t hal_clock_hz(void)
{
  return rcc_ahb_frequency;
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

uint64_t hal_cycles(void)
{
  /* SysTick counts down from SYSTICK_RELOAD at the core clock; the interrupt counts wraps.
   * Re-read if a wrap was counted between the two reads. */
  for (;;) {
    uint64_t wraps = systick_wraps;
    uint32_t remaining = systick_get_value();
    if (wraps == systick_wraps) {
      return (wraps + 1) * (SYSTICK_RELOAD + 1ull) - remaining;
    }
  }
}

void hal_cycles_restart_period(void)
{
  /* A write to the current value restarts the period without an interrupt. The period it cut
   * short counts as a whole one, so the count jumps forward; with interrupts off, a wrap already
   * pending is counted after this one. */
  cm_disable_interrupts();
  systick_clear();
  systick_wraps++;
  cm_enable_interrupts();
}

/* Fault handlers (libopencm3's are endless loops): report the faulting PC, stacked at word 6 of
 * the exception frame on whichever stack was in use (EXC_RETURN bit 2), through the harness. */
static const char *const fault_kinds[] = {"HardFault", "MemManage fault", "BusFault", "UsageFault"};

static void __attribute__((used, noreturn)) report_fault(const uint32_t *frame, uint32_t kind)
{
  pqs_fault(fault_kinds[kind], frame[6]);
}

#define FAULT_HANDLER(name, kind)                                                                  \
  void __attribute__((naked)) name(void)                                                           \
  {                                                                                                \
    __asm volatile("tst lr, #4\n\tite eq\n\tmrseq r0, msp\n\tmrsne r0, psp\n\t"                   \
                   "movs r1, #" #kind "\n\tb report_fault\n");                                     \
  }

FAULT_HANDLER(hard_fault_handler, 0)
FAULT_HANDLER(mem_manage_handler, 1)
FAULT_HANDLER(bus_fault_handler, 2)
FAULT_HANDLER(usage_fault_handler, 3)

const char *hal_board_name(void)
{
  return "stm32f4discovery";
}

/* The chip's 96-bit unique ID (RM0090 section 39.1) as 24 hex digits, its highest word first. */
const char *hal_board_serial(void)
{
  static char serial[25];
  if (serial[0] == '\0') {
    for (unsigned word = 0; word < 3; word++) {
      uint32_t value = MMIO32(DESIG_UNIQUE_ID_BASE + 4 * (2 - word));
      for (unsigned digit = 0; digit < 8; digit++) {
        serial[8 * word + digit] = "0123456789ABCDEF"[(value >> (28 - 4 * digit)) & 0xFu];
      }
    }
  }
  return serial;
}
