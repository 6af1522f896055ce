#include <pqscope/stackmeter.h>

/* The first word from `lowest` up that does not hold the pattern, or `end`. Eight words per
 * step: a loop iteration is a block of the virtual board's profiler, and the region is ~100 KB. */
static volatile uint32_t *first_overwritten(volatile uint32_t *lowest, volatile uint32_t *end)
{
  volatile uint32_t *p = lowest;
  while (end - p >= 8 &&
         ((p[0] ^ PQS_STACK_PATTERN) | (p[1] ^ PQS_STACK_PATTERN) | (p[2] ^ PQS_STACK_PATTERN) |
          (p[3] ^ PQS_STACK_PATTERN) | (p[4] ^ PQS_STACK_PATTERN) | (p[5] ^ PQS_STACK_PATTERN) |
          (p[6] ^ PQS_STACK_PATTERN) | (p[7] ^ PQS_STACK_PATTERN)) == 0) {
    p += 8;
  }
  while (p < end && *p == PQS_STACK_PATTERN) {
    p++;
  }
  return p;
}

void pqs_stack_paint(uint32_t *lowest, uint32_t *end)
{
  /* The deepest words usually still hold the pattern from the last painting: write only from the
   * first one that does not. Reading is cheaper than writing on the virtual board, where every
   * store takes the emulator's slow path, and no dearer on the chip. */
  for (volatile uint32_t *p = first_overwritten(lowest, end); p < end; p++) {
    *p = PQS_STACK_PATTERN;
  }
}

size_t pqs_stack_used(const uint32_t *lowest, const uint32_t *painted_end, const uint8_t *top)
{
  const volatile uint32_t *p = first_overwritten((volatile uint32_t *)lowest, (volatile uint32_t *)painted_end);
  return (size_t)(top - (const uint8_t *)p);
}
