/* Guard regions (pqscope/guard.h): the canaries around a buffer, the first changed one found at its
 * offset (past the end first, then before the start), and the error text naming it. */
#include <pqscope/guard.h>
#include <unity.h>

#include <stddef.h>
#include <string.h>

#include "test_support.h"

#define BYTES 32
static PQS_GUARDED(BYTES) guarded;
/* Two buffers sharing the guard between them, as a key slot's pk and sk do. */
static struct {
  uint8_t before[PQS_GUARD_BYTES];
  uint8_t first[BYTES];
  uint8_t shared[PQS_GUARD_BYTES];
  uint8_t second[BYTES];
  uint8_t after[PQS_GUARD_BYTES];
} pair;

void setUp(void) {}
void tearDown(void) {}

static void test_filled_guards_are_intact_whatever_the_buffer_holds(void)
{
  int32_t offset = 12345;
  pqs_guard_fill(guarded.bytes, BYTES);
  memset(guarded.bytes, 0xA5, BYTES);
  TEST_ASSERT_FALSE(pqs_guard_find(guarded.bytes, BYTES, &offset));
  TEST_ASSERT_EQUAL_INT32(12345, offset);
}

static void test_each_byte_past_the_end_is_found_at_its_offset(void)
{
  for (int32_t past = 0; past < PQS_GUARD_BYTES; past++) {
    int32_t offset;
    pqs_guard_fill(guarded.bytes, BYTES);
    guarded.after[past] ^= 0x01;
    TEST_ASSERT_TRUE(pqs_guard_find(guarded.bytes, BYTES, &offset));
    TEST_ASSERT_EQUAL_INT32(BYTES + past, offset);
  }
}

static void test_each_byte_before_the_start_is_found_at_its_negative_offset(void)
{
  for (int32_t before = 1; before <= PQS_GUARD_BYTES; before++) {
    int32_t offset;
    pqs_guard_fill(guarded.bytes, BYTES);
    guarded.before[PQS_GUARD_BYTES - before] ^= 0x80;
    TEST_ASSERT_TRUE(pqs_guard_find(guarded.bytes, BYTES, &offset));
    TEST_ASSERT_EQUAL_INT32(-before, offset);
  }
}

static void test_the_nearest_byte_past_the_end_is_named_first(void)
{
  int32_t offset;
  pqs_guard_fill(guarded.bytes, BYTES);
  guarded.before[0] ^= 0xFF;
  guarded.after[40] ^= 0xFF;
  guarded.after[3] ^= 0xFF;
  TEST_ASSERT_TRUE(pqs_guard_find(guarded.bytes, BYTES, &offset));
  TEST_ASSERT_EQUAL_INT32(BYTES + 3, offset);
}

static void test_an_overflow_of_zeros_or_of_a_repeated_byte_is_seen(void)
{
  const uint8_t fills[] = {0x00, 0xFF, 0xA5, 0x5A};
  for (size_t i = 0; i < sizeof fills; i++) {
    int32_t offset;
    pqs_guard_fill(guarded.bytes, BYTES);
    memset(guarded.bytes, fills[i], BYTES);
    memset(guarded.after, fills[i], 8);
    TEST_ASSERT_TRUE(pqs_guard_find(guarded.bytes, BYTES, &offset));
    TEST_ASSERT_LESS_OR_EQUAL_INT32(BYTES + 7, offset);
  }
}

static void test_a_guard_shared_by_two_buffers_holds_for_both(void)
{
  int32_t offset;
  pqs_guard_fill(pair.first, BYTES);
  pqs_guard_fill(pair.second, BYTES);
  TEST_ASSERT_FALSE(pqs_guard_find(pair.first, BYTES, &offset));
  TEST_ASSERT_FALSE(pqs_guard_find(pair.second, BYTES, &offset));
  pair.shared[5] ^= 0x10;
  TEST_ASSERT_TRUE(pqs_guard_find(pair.first, BYTES, &offset));
  TEST_ASSERT_EQUAL_INT32(BYTES + 5, offset);
  TEST_ASSERT_TRUE(pqs_guard_find(pair.second, BYTES, &offset));
  TEST_ASSERT_EQUAL_INT32(-(PQS_GUARD_BYTES - 5), offset);
}

static void test_disarm_names_the_armed_buffer_that_was_overrun(void)
{
  struct pqs_guarded_buffer buffers[] = {{"message", pair.first, BYTES}, {"signature", pair.second, BYTES}};
  struct pqs_guard_violation violation;
  pqs_guard_arm(2, buffers, 2);
  TEST_ASSERT_EQUAL_UINT32(2, pqs_state.operation);
  TEST_ASSERT_TRUE(pqs_guard_disarm(&violation));
  TEST_ASSERT_EQUAL_UINT32(0, pqs_state.operation);
  pqs_guard_arm(2, buffers, 2);
  pair.after[28] ^= 0xFF;
  TEST_ASSERT_FALSE(pqs_guard_disarm(&violation));
  TEST_ASSERT_EQUAL_STRING("signature", violation.buffer);
  TEST_ASSERT_EQUAL_INT32(BYTES + 28, violation.offset);
}

static void test_disarm_sees_a_write_into_the_harness_state_guards(void)
{
  struct pqs_guard_violation violation;
  /* Operation 0, none running: the virtual board, which stops at such a write during an
   * operation, leaves it to the check here. */
  pqs_guard_arm(0, NULL, 0);
  pqs_guarded_state.after[0] ^= 0xFF;
  TEST_ASSERT_FALSE(pqs_guard_disarm(&violation));
  TEST_ASSERT_EQUAL_STRING("harness state", violation.buffer);
  TEST_ASSERT_EQUAL_INT32((int32_t)sizeof pqs_state, violation.offset);
}

static void test_disarm_sees_a_store_into_the_wrap_count_that_skipped_the_guards(void)
{
  struct pqs_guard_violation violation;
  pqs_guard_arm(0, NULL, 0);
  pqs_counter_wrapped(); /* as the board's interrupt does: no violation */
  TEST_ASSERT_TRUE(pqs_guard_disarm(&violation));
  pqs_guard_arm(0, NULL, 0);
  ((volatile uint8_t *)&pqs_state.counter_wraps)[2] ^= 0x01;
  TEST_ASSERT_FALSE(pqs_guard_disarm(&violation));
  TEST_ASSERT_EQUAL_STRING("harness's cycle counter", violation.buffer);
  TEST_ASSERT_EQUAL_INT32(2, violation.offset);
  ((volatile uint8_t *)&pqs_state.counter_wraps)[2] ^= 0x01;
}

static void test_disarm_sees_a_changed_counter(void)
{
  struct pqs_guard_violation violation;
  pqs_guard_arm(0, NULL, 0);
  pqs_state.counters.message_len ^= 0x100;
  TEST_ASSERT_FALSE(pqs_guard_disarm(&violation));
  TEST_ASSERT_EQUAL_STRING("harness's counters", violation.buffer);
  TEST_ASSERT_EQUAL_INT32((int32_t)offsetof(struct pqs_harness_counters, message_len) + 1, violation.offset);
  pqs_state.counters.message_len ^= 0x100;
}

static void test_the_error_names_operation_buffer_and_offset(void)
{
  char text[160];
  const struct pqs_guard_violation past = {"signature", 32, 60}, before = {"public key", 1312, -3};
  pqs_guard_describe(text, sizeof text, "sign", &past);
  TEST_ASSERT_EQUAL_STRING("sign wrote at offset 60 of the signature (its 32 bytes + 28)", text);
  pqs_guard_describe(text, sizeof text, "verify", &before);
  TEST_ASSERT_EQUAL_STRING("verify wrote at offset -3 of the public key (its start - 3)", text);
  const struct pqs_guard_violation inside = {"harness's cycle counter", 8, 2};
  pqs_guard_describe(text, sizeof text, "sign", &inside);
  TEST_ASSERT_EQUAL_STRING("sign wrote at offset 2 of the harness's cycle counter (inside it: a store that skipped "
                           "the guards)", text);
  pqs_guard_describe(text, 12, "sign", &past);
  TEST_ASSERT_EQUAL_STRING("sign wrote ", text);
}

static void test_the_stack_overflow_error_names_operation_use_and_address(void)
{
  char text[160];
  pqs_stack_overflow_describe(text, sizeof text, "sign", 110328, 0x20000b08u);
  TEST_ASSERT_EQUAL_STRING("sign used the whole stack, 110328 bytes down to 0x20000b08 (the end of .bss): it "
                           "overflowed into the data below", text);
}

int main(void)
{
  pqs_test_setup();
  UNITY_BEGIN();
  RUN_TEST(test_filled_guards_are_intact_whatever_the_buffer_holds);
  RUN_TEST(test_each_byte_past_the_end_is_found_at_its_offset);
  RUN_TEST(test_each_byte_before_the_start_is_found_at_its_negative_offset);
  RUN_TEST(test_the_nearest_byte_past_the_end_is_named_first);
  RUN_TEST(test_an_overflow_of_zeros_or_of_a_repeated_byte_is_seen);
  RUN_TEST(test_a_guard_shared_by_two_buffers_holds_for_both);
  RUN_TEST(test_disarm_names_the_armed_buffer_that_was_overrun);
  RUN_TEST(test_disarm_sees_a_write_into_the_harness_state_guards);
  RUN_TEST(test_disarm_sees_a_store_into_the_wrap_count_that_skipped_the_guards);
  RUN_TEST(test_disarm_sees_a_changed_counter);
  RUN_TEST(test_the_error_names_operation_buffer_and_offset);
  RUN_TEST(test_the_stack_overflow_error_names_operation_use_and_address);
  return pqs_test_finish(UNITY_END());
}
