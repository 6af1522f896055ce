/* Optional per-function profile (--profile): exclusive cycles per function from the blocks
 * that ran in it, and inclusive cycles and call counts from a shadow call stack.
 * Output format (JSON):
 *   {"format": "pqscope-vboard-profile", "version": 1, "model_cycles": N,
 *    "unattributed_cycles": N,           // blocks outside every function symbol
 *    "functions": [{"name", "addr", "size", "calls", "inclusive_cycles", "exclusive_cycles"}],
 *    "call_distributions": {"<function>": [[cycles, count], ...]}}  // --profile-calls
 * Intervals (--intervals FILE --interval-function NAME): every call of NAME is one interval,
 * written as one JSON line when it returns:
 *   {"interval": k, "sample_id": N, "start_cycle": N, "cycles": N, "blocks": N,
 *    "trace_hash": "0x...",
 *    "functions": {"<name>": [exclusive_cycles, calls, inclusive_cycles], ...}}
 * "sample_id" only with --interval-id-symbol SYMBOL: the 32-bit value of the data symbol SYMBOL
 * when the interval began (the harness keeps the sample id of its current command there).
 * inclusive_cycles: the summed durations (call to return, callees included; an interrupt's time,
 * entry to return, is its handler's alone) of the function's activations that began inside the
 * interval, outermost ones only (a recursive call lies inside one already). NAME's own call
 * brackets the interval and the shadow stack unwinds in order, so every activation begun inside
 * also returns inside, at the latest with NAME: none is cut at the end, and NAME's
 * inclusive_cycles equal "cycles" less the interrupts' (the handlers' inclusive). Callers of NAME
 * began before the interval and return after it: they are left out, and one of them that is
 * also called inside counts from that inner call.
 * With --public-function NAME (repeatable), the exclusive time of NAME's calls and their callees
 * goes to "(public-input functions)" instead; their inclusive_cycles (and calls) stay under
 * their own names, so they can be compared with a probe around the function on the device.
 * The pseudo-functions "(public-input functions)" and "(unattributed)" have no calls; their
 * inclusive_cycles equal their exclusive_cycles.
 * trace_hash is FNV-1a-64 over the addresses of the blocks executed in the interval: equal
 * hashes mean the same control flow. A call is control reaching a function's first address
 * with a new return address in LR (BL/BLX, and tail calls, which share their caller's return);
 * it ends when control reaches that return address. */
#ifndef VBOARD_PROFILE_H
#define VBOARD_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

struct elf_image;
struct profile;

/* What the profiler reads from the core (analysis_hooks.c implements it). */
struct profile_core {
	void *core;
	uint32_t (*link_register)(void *core);
	/* False if `addr` is not mapped. */
	bool (*read_word)(void *core, uint32_t addr, uint32_t *value);
};

struct profile *profile_new(const struct elf_image *elf);
/* Records the cycles of every call of function `name`. Returns -1 after printing an error. */
int profile_track_calls(struct profile *p, const char *name);
/* Makes every call of function `name` an interval written to `path` (JSON lines). */
int profile_intervals(struct profile *p, const char *name, const char *path);
/* Within intervals, books the time of calls of `name` and everything they call to the one
 * pseudo-function "(public-input functions)": work that depends only on public data. */
int profile_public_function(struct profile *p, const char *name);
/* Labels every interval with the 32-bit data symbol `name`'s value at its start. */
int profile_interval_id_symbol(struct profile *p, const char *name);
/* Once the core's memory is loaded. Returns -1 after printing an error. */
int profile_attach(struct profile *p, const struct profile_core *core);
/* A block starting at `addr` ran; model time is `now` at its end. */
void profile_block(struct profile *p, uint32_t addr, uint64_t now);
/* Blocks at `addrs` ran, one after another, inside the function of the block before them and none
 * at its entry (no call begins or returns); model time is `now` at the end of the last: as many
 * profile_block calls, at once (native_calls.c's recorded blocks). */
void profile_blocks_inside(struct profile *p, const uint32_t *addrs, uint32_t n, uint64_t now);
/* The block running stalled until model time `now` (an operand-dependent division, a load waiting
 * for flash): its function's, not the next block's. */
void profile_stall(struct profile *p, uint64_t now);
/* An exception handler returned at model time `cycles` (its return included) to `resume`: its
 * time, entry to return, is its own, not in the inclusive time of the functions it interrupted.
 * The function at `resume` is counted interrupted in the open interval (the fourth number of its
 * line in intervals.jsonl, left out where 0): where an exception lands moves a few cycles of the
 * block it resumes (the refill of a branch it cut), so its own time says nothing of the secrets. */
void profile_exception_return(struct profile *p, uint64_t cycles, uint32_t resume);
int profile_write(const struct profile *p, const char *path, uint64_t model_cycles);
void profile_free(struct profile *p);

#endif
