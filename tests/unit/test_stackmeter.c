/* Stack measurement by painting, on a simulated stack (an array growing down from its end). */
#include <pqscope/stackmeter.h>
#include <unity.h>

#include "test_support.h"

#define WORDS 256
static uint32_t stack[WORDS];

void setUp(void) {}
void tearDown(void) {}

static const uint8_t *top_of_stack(void) { return (const uint8_t *)(stack + WORDS); }

/* An operation that pushes `bytes` of (non-pattern) data below the top. */
static void use_stack(size_t bytes)
{
  for (size_t i = 0; i < bytes / 4; i++) {
    stack[WORDS - 1 - i] = (uint32_t)i;
  }
}

static void test_measures_exactly_the_bytes_written_below_the_top(void)
{
  const size_t depths[] = {4, 64, 500, 1000};
  for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
    pqs_stack_paint(stack, stack + WORDS);
    use_stack(depths[i]);
    TEST_ASSERT_EQUAL(depths[i], pqs_stack_used(stack, stack + WORDS, top_of_stack()));
  }
}

static void test_repainting_forgets_the_previous_operation(void)
{
  pqs_stack_paint(stack, stack + WORDS);
  use_stack(800);
  pqs_stack_paint(stack, stack + WORDS);
  use_stack(40);
  TEST_ASSERT_EQUAL(40, pqs_stack_used(stack, stack + WORDS, top_of_stack()));
}

static void test_painting_leaves_every_word_holding_the_pattern(void)
{
  /* Pattern words below, between and above overwritten ones, as an earlier painting and an
   * operation that used the stack unevenly leave them. */
  for (size_t i = 0; i < WORDS; i++) {
    stack[i] = (i % 7 == 3 || i > WORDS - 9) ? (uint32_t)i : PQS_STACK_PATTERN;
  }
  pqs_stack_paint(stack, stack + WORDS);
  for (size_t i = 0; i < WORDS; i++) {
    TEST_ASSERT_EQUAL_HEX32(PQS_STACK_PATTERN, stack[i]);
  }
}

static void test_use_above_the_painted_area_reports_its_upper_bound(void)
{
  /* Only the lower half is painted (the upper half is the measuring code's own frame). */
  pqs_stack_paint(stack, stack + WORDS / 2);
  TEST_ASSERT_EQUAL(WORDS / 2 * 4, pqs_stack_used(stack, stack + WORDS / 2, top_of_stack()));
}

static void test_exhausted_stack_reports_the_whole_region(void)
{
  pqs_stack_paint(stack, stack + WORDS);
  use_stack(WORDS * 4);
  TEST_ASSERT_EQUAL(WORDS * 4, pqs_stack_used(stack, stack + WORDS, top_of_stack()));
}

int main(void)
{
  pqs_test_setup();
  UNITY_BEGIN();
  RUN_TEST(test_measures_exactly_the_bytes_written_below_the_top);
  RUN_TEST(test_repainting_forgets_the_previous_operation);
  RUN_TEST(test_painting_leaves_every_word_holding_the_pattern);
  RUN_TEST(test_use_above_the_painted_area_reports_its_upper_bound);
  RUN_TEST(test_exhausted_stack_reports_the_whole_region);
  return pqs_test_finish(UNITY_END());
}
