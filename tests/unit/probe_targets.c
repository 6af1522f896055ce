#include "probe_targets.h"

void (*inner_call)(void);
uint32_t recursion_left;
void (*recursion)(void);
static volatile uint32_t work_done;

void empty_target(void)
{
}

void inner_work(void)
{
  work_done = work_done * 3u + 1u;
}

void outer_work(void)
{
  for (int i = 0; i < INNER_CALLS; i++) {
    work_done = work_done ^ (uint32_t)i;
    inner_call();
  }
}

void recurse(void)
{
  if (recursion_left > 0) {
    recursion_left--;
    recursion();
  }
}

uint64_t mix_arguments(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e, uint32_t f,
                       double x)
{
  uint32_t sum = a + 2u * b + 3u * c + 4u * d + 5u * e + 6u * f;
  return (uint64_t)sum << 32 | (uint32_t)(int32_t)(x * 1000.0);
}

__attribute__((naked)) uint32_t flags_after(void (*compare)(void), double a, double b,
                                            uint32_t registers[4])
{
  __asm volatile("push {r4, r5, r6, lr}\n\t"
                 "mov r4, r0\n\t"
                 "mov r5, r1\n\t"
                 "vmov r0, r1, d0\n\t"
                 "vmov r2, r3, d1\n\t"
                 "blx r4\n\t"
                 "mrs r6, APSR\n\t"
                 "stm r5, {r0-r3}\n\t"
                 "mov r0, r6\n\t"
                 "pop {r4, r5, r6, pc}\n");
}
