/* Stack high-water mark by painting: fill the free stack with a pattern before an operation, then
 * find the lowest word the operation overwrote. */
#ifndef PQSCOPE_STACKMETER_H
#define PQSCOPE_STACKMETER_H

#include <stddef.h>
#include <stdint.h>

#define PQS_STACK_PATTERN 0xC5A35A3Cu

/* Paints the words in [lowest, end). */
void pqs_stack_paint(uint32_t *lowest, uint32_t *end);

/* Bytes of stack used below top, given that [lowest, painted_end) was painted before: top minus
 * the lowest overwritten word. If no painted word was overwritten, the use did not reach the
 * painted area and the result is top - painted_end (an upper bound). */
size_t pqs_stack_used(const uint32_t *lowest, const uint32_t *painted_end, const uint8_t *top);

#endif
