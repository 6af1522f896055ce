#include <pqscope/stackmeter.h>

void pqs_stack_paint(uint32_t *lowest, uint32_t *end)
{
  for (volatile uint32_t *p = lowest; p < end; p++) {
    *p = PQS_STACK_PATTERN;
  }
}

size_t pqs_stack_used(const uint32_t *lowest, const uint32_t *painted_end, const uint8_t *top)
{
  const volatile uint32_t *p = lowest;
  while (p < painted_end && *p == PQS_STACK_PATTERN) {
    p++;
  }
  return (size_t)(top - (const uint8_t *)p);
}
