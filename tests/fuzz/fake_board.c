/* The board interface (pqscope/hal.h) on the host, for tests/fuzz (fake_board.h). */
#include <pqscope/hal.h>

#include "fake_board.h"

#include <stdio.h>
#include <stdlib.h>

uint8_t __pqscope_stack_limit[FAKE_BOARD_STACK_BYTES] __attribute__((aligned(16)));
uint8_t fake_board_output[FAKE_BOARD_OUTPUT_BYTES];
size_t fake_board_output_len;
static uint64_t cycles;

void fake_board_reset(void)
{
  fake_board_output_len = 0;
  cycles = 0;
}

void hal_setup(void)
{
}

uint32_t hal_clock_hz(void)
{
  return 24000000;
}

void hal_putc(uint8_t byte)
{
  if (fake_board_output_len == sizeof fake_board_output) {
    fprintf(stderr, "fake board: output buffer full (%d bytes)\n", FAKE_BOARD_OUTPUT_BYTES);
    abort();
  }
  fake_board_output[fake_board_output_len++] = byte;
}

/* The fuzzer pushes bytes into the harness itself (pqs_harness_receive_byte). */
uint8_t hal_getc(void)
{
  fprintf(stderr, "fake board: hal_getc is not used\n");
  abort();
}

uint64_t hal_cycles(void)
{
  return cycles += 3;
}

void hal_cycles_restart_period(void)
{
}

const char *hal_board_name(void)
{
  return "fake";
}

const char *hal_board_serial(void)
{
  return "0123456789ABCDEF01234567";
}

const char *hal_clock_source(void)
{
  return "HSE";
}

const char *hal_clock_fallback_reason(void)
{
  return "";
}
