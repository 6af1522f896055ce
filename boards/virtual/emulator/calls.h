/* Calls and returns as the emulator sees them at the start of each translated block, shared by
 * the profiler (profile.c) and the taint tracker (taint.c). A call of a function is control
 * reaching its first address with a new return address in LR (BL/BLX, and tail calls, which
 * share their caller's return); it ends when control reaches that return address. Calls and
 * returns always start a block: a branch ends one and its target starts the next. */
#ifndef VBOARD_CALLS_H
#define VBOARD_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct call_frame {
	uint32_t func;  /* the caller's name for the function: an index or its entry address */
	uint32_t ret;   /* return address, without the Thumb bit */
};

/* Control reached the first address of function `func` with `lr` in LR: a new call, unless it
 * loops back to the entry of `innermost`, the innermost open call (NULL: none is open). */
static inline bool call_begins(const struct call_frame *innermost, uint32_t func, uint32_t lr)
{
	return !innermost || innermost->func != func || innermost->ret != (lr & ~1u);
}

/* Control reached `addr`: the innermost open call (NULL: none) returns. */
static inline bool call_returns(const struct call_frame *innermost, uint32_t addr)
{
	return innermost && innermost->ret == addr;
}

#endif
