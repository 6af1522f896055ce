/* The STM32 boards' shared part of pqscope/hal.h (boards/common/cortex_m4.h). */
#include "cortex_m4.h"

#include <pqscope/fault.h>
#include <pqscope/guard.h>
#include <pqscope/hal.h>

#include <libopencm3/cm3/common.h>
#include <libopencm3/cm3/cortex.h>
#include <libopencm3/cm3/systick.h>

#define SYSTICK_RELOAD 0xFFFFFFu /* the full 24-bit range: one interrupt per 2^24 cycles */

/* The count of SysTick's wraps, in the harness's guarded state (pqscope/guard.h): an
 * implementation's overflow cannot change the cycle count unseen. */
#define systick_wraps (pqs_state.counter_wraps)

void sys_tick_handler(void)
{
  pqs_counter_wrapped();
}

void board_cycle_counter_setup(void)
{
  systick_set_clocksource(STK_CSR_CLKSOURCE_AHB);
  systick_set_reload(SYSTICK_RELOAD);
  systick_clear();
  systick_interrupt_enable();
  systick_counter_enable();
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
  pqs_counter_wrapped();
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

const char *board_serial_from_unique_id(uintptr_t base)
{
  static char serial[25];
  if (serial[0] == '\0') {
    for (unsigned word = 0; word < 3; word++) {
      uint32_t value = MMIO32(base + 4 * (2 - word));
      for (unsigned digit = 0; digit < 8; digit++) {
        serial[8 * word + digit] = "0123456789ABCDEF"[(value >> (28 - 4 * digit)) & 0xFu];
      }
    }
  }
  return serial;
}
