/* --cycle-jitter: every read of a cycle counter (SysTick's current value, DWT CYCCNT) returns
 * the count of a pseudo-random 0..max cycles later, a board's timing noise, for a stand-in board
 * whose totals are not the model's. The two counters draw from one sequence, in the order of the
 * reads. */
#ifndef VBOARD_CYCLE_JITTER_H
#define VBOARD_CYCLE_JITTER_H

#include <stdint.h>

struct cycle_jitter {
	uint32_t max;     /* 0: no noise */
	uint64_t state;   /* xorshift64 */
};

static inline void cycle_jitter_set(struct cycle_jitter *j, uint32_t max, uint64_t seed)
{
	j->max = max;
	j->state = seed | 1; /* xorshift64 never leaves 0 */
}

/* How late the read now in progress is. */
static inline uint32_t cycle_jitter_draw(struct cycle_jitter *j)
{
	if (!j->max)
		return 0;
	uint64_t x = j->state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	j->state = x;
	return (uint32_t)(x % ((uint64_t)j->max + 1));
}

#endif
