#include "test_support.h"

#include <pqscope/fault.h>
#include <pqscope/hal.h>

void pqs_test_setup(void)
{
  hal_setup();
}

int pqs_test_finish(int failures)
{
  (void)failures;
  for (;;) {
  }
}

/* A test image has no protocol: a fault is reported as a text line where the results go. */
void pqs_fault(const char *kind, uint32_t pc)
{
  char message[PQS_FAULT_MESSAGE_BYTES];
  pqs_fault_message(message, kind, pc);
  for (const char *c = message; *c; c++) {
    hal_putc((uint8_t)*c);
  }
  hal_putc('\n');
  for (;;) {
  }
}
