#include "flash_art.h"

#include <string.h>

void art_reset(struct art *a)
{
	memset(a, 0, sizeof *a);
	a->current = ART_NO_LINE;
	a->prefetched = ART_NO_LINE;
	a->icache.size = ART_ICACHE_LINES;
	a->dcache.size = ART_DCACHE_LINES;
}

static void cache_empty(struct art_cache *c)
{
	unsigned size = c->size;
	memset(c, 0, sizeof *c);
	c->size = size;
}

void art_set_acr(struct art *a, uint32_t acr)
{
	/* RM0090: ICRST/DCRST take effect only while the cache is disabled; they read back as 0. */
	if ((acr & FLASH_ACR_ICRST) && !(acr & FLASH_ACR_ICEN))
		cache_empty(&a->icache);
	if ((acr & FLASH_ACR_DCRST) && !(acr & FLASH_ACR_DCEN))
		cache_empty(&a->dcache);
	a->acr = acr & ~(FLASH_ACR_ICRST | FLASH_ACR_DCRST);
}

unsigned art_wait_states(const struct art *a)
{
	return a->acr & FLASH_ACR_LATENCY_MASK;
}

unsigned art_required_wait_states(uint64_t hclk, uint32_t hz_per_wait_state)
{
	return hclk == 0 ? 0 : (unsigned)((hclk - 1) / hz_per_wait_state);
}

/* Slot `i` (0-based) out of the list by last use. */
static void unlink_slot(struct art_cache *c, unsigned i)
{
	uint8_t newer = c->newer[i], older = c->older[i];
	if (newer)
		c->older[newer - 1] = older;
	else
		c->newest = older;
	if (older)
		c->newer[older - 1] = newer;
	else
		c->oldest = newer;
}

static void make_newest(struct art_cache *c, unsigned i)
{
	c->older[i] = c->newest;
	c->newer[i] = 0;
	if (c->newest)
		c->newer[c->newest - 1] = (uint8_t)(i + 1);
	else
		c->oldest = (uint8_t)(i + 1);
	c->newest = (uint8_t)(i + 1);
}

/* Looks `line` up; a hit becomes the most recently used. */
static bool cache_hit(struct art_cache *c, uint32_t line)
{
	for (uint8_t s = c->bucket[line % ART_BUCKETS]; s; s = c->chain[s - 1]) {
		if (c->line[s - 1] == line) {
			if (c->newest != s) {
				unlink_slot(c, s - 1u);
				make_newest(c, s - 1u);
			}
			return true;
		}
	}
	return false;
}

/* Puts `line` (not cached) in an empty slot, or in place of the least recently used one. */
static void cache_fill(struct art_cache *c, uint32_t line)
{
	unsigned i;
	if (c->filled < c->size) {
		i = c->filled++;
	} else {
		i = c->oldest - 1u;
		unlink_slot(c, i);
		uint8_t *at = &c->bucket[c->line[i] % ART_BUCKETS];
		while (*at != i + 1)
			at = &c->chain[*at - 1];
		*at = c->chain[i];
	}
	c->line[i] = line;
	c->chain[i] = c->bucket[line % ART_BUCKETS];
	c->bucket[line % ART_BUCKETS] = (uint8_t)(i + 1);
	make_newest(c, i);
}

/* A read of the array requested at `now`: it starts when the read in progress ends, and no
 * earlier than `now`; returns when its line is there. At 0 wait states that is now + 1, the fetch
 * cycle the instruction costs include. A read requested earlier that has not begun is dropped for
 * it: the prefetch buffer holds one line, so a newer request (a demand fetch, or a prefetch asked
 * for by a line run from the cache) takes its place instead of queueing behind it. */
static uint64_t array_read(struct art *a, uint64_t now)
{
	uint64_t start;
	if (a->read_start > now) {
		start = a->read_start;
		a->prefetched = ART_NO_LINE;
	} else {
		start = a->busy_until > now ? a->busy_until : now;
	}
	a->read_start = start;
	a->busy_until = start + art_wait_states(a) + 1;
	return a->busy_until;
}

static uint32_t wait_for(uint64_t ready, uint64_t now)
{
	return ready > now + 1 ? (uint32_t)(ready - now - 1) : 0;
}

uint32_t art_fetch(struct art *a, uint32_t line, uint64_t now)
{
	if (line == a->current) {
		a->counts.fetch_current++;
		return 0;
	}
	uint32_t stall;
	if ((a->acr & FLASH_ACR_ICEN) && cache_hit(&a->icache, line)) {
		stall = 0;
		a->counts.fetch_cached++;
	} else if ((a->acr & FLASH_ACR_PRFTEN) && line == a->prefetched) {
		stall = wait_for(a->prefetch_ready, now);
		if (a->acr & FLASH_ACR_ICEN)
			cache_fill(&a->icache, line);
		a->counts.fetch_prefetched++;
	} else {
		stall = wait_for(array_read(a, now), now);
		if (a->acr & FLASH_ACR_ICEN)
			cache_fill(&a->icache, line);
		a->counts.fetch_missed++;
	}
	a->current = line;
	if ((a->acr & FLASH_ACR_PRFTEN) && a->prefetched != line + 1) {
		a->prefetch_ready = array_read(a, now + stall);
		a->prefetched = line + 1;
	}
	a->counts.stall_cycles += stall;
	return stall;
}

uint32_t art_load(struct art *a, uint32_t offset, uint32_t bytes)
{
	uint32_t stall = 0;
	for (uint32_t line = art_line(offset); line <= art_line(offset + bytes - 1); line++) {
		if ((a->acr & FLASH_ACR_DCEN) && cache_hit(&a->dcache, line)) {
			a->counts.load_cached++;
			continue;
		}
		stall += art_wait_states(a);
		if (a->acr & FLASH_ACR_DCEN)
			cache_fill(&a->dcache, line);
		a->counts.load_missed++;
	}
	a->counts.stall_cycles += stall;
	return stall;
}
