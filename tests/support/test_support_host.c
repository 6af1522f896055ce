#include "test_support.h"

void pqs_test_setup(void) {}

int pqs_test_finish(int failures)
{
  return failures;
}
