/* The STM32F407's flash interface at more than 0 wait states: the adaptive real-time memory
 * accelerator (ART) of RM0090 section 3.5.2 "Adaptive real-time memory accelerator", whose state
 * decides what a fetch or a load from flash costs.
 *
 * What the model takes from RM0090 (3.5.2, 3.9.1 FLASH_ACR):
 * - The flash array is read 128 bits (a line) at a time in LATENCY + 1 HCLK cycles; at 0 wait
 *   states a read costs nothing beyond the core's own cycle, so every delay here is counted in
 *   multiples of LATENCY.
 * - Instruction fetches (I-Code): the line being executed is held; with PRFTEN the next sequential
 *   line is read while it executes; with ICEN, 64 lines are kept, filled on each miss ("requested
 *   data not present in the currently used instruction line, in the prefetched instruction line
 *   or in the instruction cache memory"), replaced least recently used.
 * - Data loads from flash (D-Code: literal pools, constant tables): with DCEN, 8 lines kept the
 *   same way. D-Code has priority over I-Code, so a load does not wait for a prefetch.
 * - ICRST/DCRST empty the caches (allowed only while the cache is disabled).
 * Not in RM0090, so chosen here and stated in the README: the array serves one read at a time (a
 * demand fetch waits for a prefetch in progress), and a new request takes the place of one not yet
 * begun (one prefetch buffer: requests never queue up); a prefetched line the core goes on to use is
 * copied into the I-cache too (RM0090 names misses only, but ST's claim of 0-wait-state
 * performance at 168 MHz needs a loop's sequential lines cached); a fetch is requested when the
 * first instruction of a line starts executing (the core's own fetch-ahead of up to three words
 * is not modelled). */
#ifndef VBOARD_FLASH_ART_H
#define VBOARD_FLASH_ART_H

#include <stdbool.h>
#include <stdint.h>

#define ART_LINE_BYTES 16u
#define ART_ICACHE_LINES 64u
#define ART_DCACHE_LINES 8u
#define ART_NO_LINE UINT32_MAX

/* FLASH_ACR (RM0090 3.9.1) */
#define FLASH_ACR_LATENCY_MASK 0x7u
#define FLASH_ACR_PRFTEN (1u << 8)
#define FLASH_ACR_ICEN (1u << 9)
#define FLASH_ACR_DCEN (1u << 10)
#define FLASH_ACR_ICRST (1u << 11)
#define FLASH_ACR_DCRST (1u << 12)

/* A cache of `size` lines replaced least recently used. Found in O(1): a fetch or load looks a
 * line up in it every time the core runs into a new one, which a linear search over 64 slots
 * made most of the emulator's time at 168 MHz. Slot links hold slot + 1 (0: none), so that an
 * all-zero cache is empty. */
#define ART_BUCKETS 128u
struct art_cache {
	unsigned size, filled;           /* slots 0..filled-1 hold lines */
	uint32_t line[ART_ICACHE_LINES];
	uint8_t chain[ART_ICACHE_LINES];  /* the next slot of the same bucket */
	uint8_t bucket[ART_BUCKETS];      /* the first slot whose line % ART_BUCKETS is this */
	uint8_t newer[ART_ICACHE_LINES], older[ART_ICACHE_LINES]; /* the slots by last use */
	uint8_t newest, oldest;
};

struct art_counts {
	uint64_t fetch_current, fetch_prefetched, fetch_cached, fetch_missed;
	uint64_t load_cached, load_missed;
	uint64_t stall_cycles;
};

struct art {
	uint32_t acr;              /* FLASH_ACR as the firmware set it */
	uint32_t current;          /* the line the core executes from */
	uint32_t prefetched;       /* the line the prefetch read (or is reading) */
	uint64_t prefetch_ready;   /* when that read completes */
	uint64_t read_start;       /* when the last read requested begins */
	uint64_t busy_until;       /* the array serves one read at a time */
	struct art_cache icache, dcache;
	struct art_counts counts;
};

void art_reset(struct art *a);
/* A write of FLASH_ACR; ICRST/DCRST empty the caches. */
void art_set_acr(struct art *a, uint32_t acr);
unsigned art_wait_states(const struct art *a);

/* The line of a flash offset (the same for the flash at 0x08000000 and its alias at 0). */
static inline uint32_t art_line(uint32_t flash_offset)
{
	return flash_offset / ART_LINE_BYTES;
}

/* The core starts executing from `line` at model time `now`: the cycles it waits for it. */
uint32_t art_fetch(struct art *a, uint32_t line, uint64_t now);
/* A load of `bytes` at flash offset `offset`: the cycles it waits. */
uint32_t art_load(struct art *a, uint32_t offset, uint32_t bytes);

/* Flash wait states needed at `hclk` when each allows `hz_per_wait_state` more: one per started
 * step beyond the first (RM0090 table 10 at 2.7-3.6 V, the Discovery's 3 V: 30 MHz). */
unsigned art_required_wait_states(uint64_t hclk, uint32_t hz_per_wait_state);

#endif
