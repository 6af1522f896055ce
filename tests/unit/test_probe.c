/* Probes (pqscope/probe.h) through the linker's --wrap, on the functions of probe_targets.c and on
 * libgcc's __aeabi_cdcmple. On the virtual board every cycle count is exact: a probe's cycles must
 * equal, to the cycle, the same work timed without probes. */
#include <pqscope/hal.h>
#include <pqscope/probe.h>
#include <string.h>
#include <unity.h>

#include "probe_targets.h"
#include "test_support.h"

/* The functions themselves, past their probes (ld --wrap). */
void __real_empty_target(void);
void __real_inner_work(void);
void __real_outer_work(void);
void __real_recurse(void);
uint64_t __real_mix_arguments(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e,
                              uint32_t f, double x);
void __aeabi_cdcmple(void);
void __real___aeabi_cdcmple(void);

#define RECURSION_DEPTH 4
#define APSR_NZCV 0xF0000000u
#define APSR_C (1u << 29)

void setUp(void) {}
void tearDown(void) {}

static const struct pqs_probe *probe(const char *name)
{
  for (uint8_t i = 0; i < pqs_probe_count; i++) {
    if (strcmp(pqs_probes[i]->name, name) == 0) {
      return pqs_probes[i];
    }
  }
  TEST_FAIL_MESSAGE(name);
  return NULL;
}

/* fn as one timed operation of the harness. */
static void measure(void (*fn)(void))
{
  pqs_probes_start_operation();
  fn();
  pqs_probes_end_operation();
}

/* The fewest cycles a probe measured for fn over a few operations (a SysTick interrupt may land
 * in one). */
static int64_t fewest_probe_cycles(void (*fn)(void), const char *name)
{
  int64_t fewest = INT64_MAX;
  for (int i = 0; i < 4; i++) {
    measure(fn);
    int64_t cycles = probe(name)->measured.cycles;
    fewest = cycles < fewest ? cycles : fewest;
  }
  return fewest;
}

/* The cycles of fn beyond those of an empty function, both called alike: what a probe on fn
 * measures. */
static int64_t cycles_beyond_empty(void (*fn)(void), void (*empty)(void))
{
  return (int64_t)(pqs_fewest_cycles(fn) - pqs_fewest_cycles(empty));
}

static void call_empty_target_five_times(void)
{
  for (int i = 0; i < 5; i++) {
    empty_target();
  }
}

static void test_calibration_measured_the_probe_costs(void)
{
  TEST_ASSERT_GREATER_THAN_UINT32(0, pqs_probe_self_cycles);
  TEST_ASSERT_GREATER_THAN_UINT32(pqs_probe_self_cycles, pqs_probe_call_cycles);
}

static void test_an_empty_probed_function_measures_zero_cycles(void)
{
  measure(call_empty_target_five_times);
  TEST_ASSERT_EQUAL_INT64(0, probe("empty_target")->measured.cycles);
  TEST_ASSERT_EQUAL_UINT32(5, probe("empty_target")->measured.calls);
}

static void test_an_operation_starts_from_zero(void)
{
  measure(call_empty_target_five_times);
  measure(inner_work);
  TEST_ASSERT_EQUAL_UINT32(0, probe("empty_target")->measured.calls);
}

static void test_probed_calls_inside_a_probed_call_cost_it_nothing(void)
{
  inner_call = __real_inner_work;
  int64_t outer_alone = cycles_beyond_empty(__real_outer_work, __real_empty_target);
  int64_t inner_alone = cycles_beyond_empty(__real_inner_work, __real_empty_target);
  inner_call = inner_work;
  TEST_ASSERT_EQUAL_INT64(outer_alone, fewest_probe_cycles(outer_work, "outer_work"));
  TEST_ASSERT_EQUAL_INT64(INNER_CALLS * inner_alone, probe("inner_work")->measured.cycles);
  TEST_ASSERT_EQUAL_UINT32(1, probe("outer_work")->measured.calls);
  TEST_ASSERT_EQUAL_UINT32(INNER_CALLS, probe("inner_work")->measured.calls);
}

static void recurse_directly(void)
{
  recursion_left = RECURSION_DEPTH;
  __real_recurse();
}

static void empty_instead_of_recursion(void)
{
  recursion_left = RECURSION_DEPTH;
  __real_empty_target();
}

static void recurse_probed(void)
{
  recursion_left = RECURSION_DEPTH;
  recurse();
}

static void test_recursion_is_timed_once_and_every_call_counted(void)
{
  recursion = __real_recurse;
  int64_t alone = cycles_beyond_empty(recurse_directly, empty_instead_of_recursion);
  recursion = recurse;
  TEST_ASSERT_EQUAL_INT64(alone, fewest_probe_cycles(recurse_probed, "recurse"));
  TEST_ASSERT_EQUAL_UINT32(RECURSION_DEPTH + 1, probe("recurse")->measured.calls);
}

static void test_stack_and_floating_point_arguments_and_a_64_bit_result_pass_intact(void)
{
  uint32_t calls = probe("mix_arguments")->calls;
  uint64_t probed = mix_arguments(1, 2, 3, 4, 5, 0x10000000u, -2.5);
  TEST_ASSERT_EQUAL_UINT32(calls + 1, probe("mix_arguments")->calls);
  TEST_ASSERT_EQUAL_HEX64(__real_mix_arguments(1, 2, 3, 4, 5, 0x10000000u, -2.5), probed);
  TEST_ASSERT_EQUAL_HEX64((uint64_t)(1 + 4 + 9 + 16 + 25 + 0x60000000u) << 32 | (uint32_t)-2500, probed);
}

static void test_a_flags_returning_helper_keeps_its_flags_and_registers(void)
{
  static const double pairs[][2] = {{1.0, 2.0}, {2.0, 1.0}, {2.0, 2.0}, {-0.0, 0.0}, {__builtin_nan(""), 1.0}};
  uint32_t calls = probe("__aeabi_cdcmple")->calls;
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    uint32_t direct[4], probed[4];
    uint32_t direct_flags = flags_after(__real___aeabi_cdcmple, pairs[i][0], pairs[i][1], direct);
    uint32_t probed_flags = flags_after(__aeabi_cdcmple, pairs[i][0], pairs[i][1], probed);
    TEST_ASSERT_EQUAL_HEX32(direct_flags & APSR_NZCV, probed_flags & APSR_NZCV);
    TEST_ASSERT_EQUAL_HEX32_ARRAY(direct, probed, 4);
    uint32_t arguments[4];
    memcpy(arguments, &pairs[i][0], 8);
    memcpy(arguments + 2, &pairs[i][1], 8);
    TEST_ASSERT_EQUAL_HEX32_ARRAY(arguments, probed, 4);
  }
  TEST_ASSERT_EQUAL_UINT32(calls + 5, probe("__aeabi_cdcmple")->calls);
  uint32_t registers[4];
  TEST_ASSERT_EQUAL_HEX32(0, flags_after(__aeabi_cdcmple, 1.0, 2.0, registers) & APSR_C);
  TEST_ASSERT_EQUAL_HEX32(APSR_C, flags_after(__aeabi_cdcmple, 2.0, 1.0, registers) & APSR_C);
}

int main(void)
{
  pqs_test_setup();
  pqs_probes_calibrate();
  UNITY_BEGIN();
  RUN_TEST(test_calibration_measured_the_probe_costs);
  RUN_TEST(test_an_empty_probed_function_measures_zero_cycles);
  RUN_TEST(test_an_operation_starts_from_zero);
  RUN_TEST(test_probed_calls_inside_a_probed_call_cost_it_nothing);
  RUN_TEST(test_recursion_is_timed_once_and_every_call_counted);
  RUN_TEST(test_stack_and_floating_point_arguments_and_a_64_bit_result_pass_intact);
  RUN_TEST(test_a_flags_returning_helper_keeps_its_flags_and_registers);
  return pqs_test_finish(UNITY_END());
}
