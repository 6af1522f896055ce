/* The fault report's text: the board's fault handlers send it with the faulting PC. */
#include <pqscope/fault.h>
#include <string.h>
#include <unity.h>

#include "test_support.h"

void setUp(void) {}
void tearDown(void) {}

static void test_names_the_fault_and_its_pc_in_hex(void)
{
  char message[PQS_FAULT_MESSAGE_BYTES];
  pqs_fault_message(message, "HardFault", 0x080012AFu);
  TEST_ASSERT_EQUAL_STRING("HardFault at pc=0x080012af", message);
  pqs_fault_message(message, "BusFault", 0);
  TEST_ASSERT_EQUAL_STRING("BusFault at pc=0x00000000", message);
}

static void test_a_long_kind_is_cut_to_keep_the_pc(void)
{
  char message[PQS_FAULT_MESSAGE_BYTES];
  pqs_fault_message(message, "a fault with a very long and rambling description of itself", 0xFFFFFFFFu);
  TEST_ASSERT_LESS_THAN(PQS_FAULT_MESSAGE_BYTES, strlen(message));
  TEST_ASSERT_EQUAL_STRING(" at pc=0xffffffff", message + strlen(message) - 17);
}

int main(void)
{
  pqs_test_setup();
  UNITY_BEGIN();
  RUN_TEST(test_names_the_fault_and_its_pc_in_hex);
  RUN_TEST(test_a_long_kind_is_cut_to_keep_the_pc);
  return pqs_test_finish(UNITY_END());
}
