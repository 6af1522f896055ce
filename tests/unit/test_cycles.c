/* The board's cycle counter (hal.h) around timed operations: an operation timed after
 * hal_cycles_restart_period() costs the same whatever ran before it, and the count never goes back. */
#include <pqscope/hal.h>
#include <unity.h>

#include "test_support.h"

#define PERIOD (1ull << 24) /* the STM32F4 board's SysTick period, in cycles */

void setUp(void) {}
void tearDown(void) {}

static __attribute__((noinline)) void spin(uint32_t iterations)
{
  for (volatile uint32_t i = 0; i < iterations; i++) {
  }
}

/* An operation longer than two counter periods, so that the counter's interrupts land inside it;
 * noinline: every call times the same instructions. */
static __attribute__((noinline)) uint64_t timed_operation_after(uint32_t history)
{
  spin(history);
  hal_cycles_restart_period();
  uint64_t start = hal_cycles();
  spin(5000000);
  uint64_t cycles = hal_cycles() - start;
  TEST_ASSERT_GREATER_THAN_UINT64(2 * PERIOD, cycles);
  return cycles;
}

static void test_an_operation_costs_the_same_whatever_ran_before(void)
{
  /* Histories shifting the counter's phase by fractions of a period (a spin is a few cycles). */
  const uint32_t histories[] = {1, 1000, 500000, 1500000, 2500000};
  uint64_t reference = timed_operation_after(0);
  for (size_t i = 0; i < sizeof histories / sizeof histories[0]; i++) {
    TEST_ASSERT_EQUAL_UINT64(reference, timed_operation_after(histories[i]));
  }
}

static void test_a_restart_moves_the_count_forward_by_less_than_a_period(void)
{
  for (uint32_t history = 0; history < 3000000; history += 250000) {
    spin(history);
    uint64_t before = hal_cycles();
    hal_cycles_restart_period();
    uint64_t after = hal_cycles();
    TEST_ASSERT_GREATER_OR_EQUAL_UINT64(before, after);
    TEST_ASSERT_LESS_OR_EQUAL_UINT64(before + PERIOD + 100, after);
  }
}

int main(void)
{
  pqs_test_setup();
  UNITY_BEGIN();
  RUN_TEST(test_an_operation_costs_the_same_whatever_ran_before);
  RUN_TEST(test_a_restart_moves_the_count_forward_by_less_than_a_period);
  return pqs_test_finish(UNITY_END());
}
