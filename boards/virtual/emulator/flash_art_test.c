/* The ART accelerator model alone: fetch and load delays from its state (RM0090 3.5.2). */
#include "check.h"
#include "flash_art.h"

#define WS5 5u

static struct art accelerator(uint32_t features)
{
	struct art a;
	art_reset(&a);
	art_set_acr(&a, WS5 | features);
	return a;
}

static void test_a_miss_waits_the_wait_states_and_the_line_then_runs_free(void)
{
	struct art a = accelerator(0);
	CHECK(art_fetch(&a, 10, 100) == WS5);
	CHECK(art_fetch(&a, 10, 110) == 0); /* still the line being executed */
	CHECK(art_fetch(&a, 11, 120) == WS5); /* no prefetch: the next line is a miss too */
	CHECK(art_fetch(&a, 10, 130) == WS5); /* no cache: back to a line is a miss again */
	CHECK(a.counts.fetch_missed == 3 && a.counts.stall_cycles == 3 * WS5);
}

static void test_prefetch_hides_the_next_line_when_the_current_one_runs_long_enough(void)
{
	struct art a = accelerator(FLASH_ACR_PRFTEN);
	CHECK(art_fetch(&a, 10, 100) == WS5); /* line 10 there at 106, line 11's read 106..112 */
	CHECK(art_fetch(&a, 11, 120) == 0);   /* needed at 120: long there */
	CHECK(art_fetch(&a, 12, 121) == 4);   /* its read started with line 11, there at 126 */
	CHECK(a.counts.fetch_prefetched == 2);
}

static void test_a_demand_fetch_waits_for_a_prefetch_in_progress(void)
{
	struct art a = accelerator(FLASH_ACR_PRFTEN);
	CHECK(art_fetch(&a, 10, 100) == WS5); /* prefetch of 11 occupies the array until 112 */
	CHECK(art_fetch(&a, 40, 107) == 5 + WS5); /* a branch: its read starts at 112 */
}

static void test_prefetches_requested_from_the_icache_do_not_queue_up(void)
{
	struct art a = accelerator(FLASH_ACR_PRFTEN | FLASH_ACR_ICEN);
	uint64_t now = 0;
	for (uint32_t line = 20; line < 28; line++, now += 100)
		art_fetch(&a, line, now);
	/* A cached loop entered at 1000, a line a cycle: each asks for its next line, and each ask
	 * takes the place of the one not yet begun (one prefetch buffer). */
	for (uint32_t line = 20; line < 28; line++)
		CHECK(art_fetch(&a, line, now = 1000 + line - 20) == 0);
	/* A branch to a new line at 1008 waits for the read in progress (1006..1012) and its own
	 * (there at 1018), not for eight queued reads (45 cycles). */
	CHECK(art_fetch(&a, 100, now += 1) == 4 + WS5);
}

static void test_the_icache_keeps_64_lines_least_recently_used(void)
{
	struct art a = accelerator(FLASH_ACR_ICEN);
	uint64_t now = 0;
	for (uint32_t line = 0; line < ART_ICACHE_LINES; line++, now += 100)
		CHECK(art_fetch(&a, line, now) == WS5);
	CHECK(art_fetch(&a, 0, now += 100) == 0);       /* cached; now the most recent */
	CHECK(art_fetch(&a, 1000, now += 100) == WS5);  /* evicts line 1, the least recent */
	CHECK(art_fetch(&a, 0, now += 100) == 0);
	CHECK(art_fetch(&a, 1, now += 100) == WS5);
	art_set_acr(&a, WS5 | FLASH_ACR_ICRST);         /* reset while disabled: empty */
	art_set_acr(&a, WS5 | FLASH_ACR_ICEN);
	CHECK(art_fetch(&a, 0, now += 100) == WS5);
}

static void test_a_loop_runs_from_the_icache_after_its_first_pass(void)
{
	struct art a = accelerator(FLASH_ACR_PRFTEN | FLASH_ACR_ICEN);
	uint64_t now = 0;
	uint32_t first_pass = 0;
	for (uint32_t line = 20; line < 24; line++, now += 4)
		first_pass += art_fetch(&a, line, now);
	CHECK(first_pass > WS5); /* a miss, then lines that run ahead of their prefetch */
	for (uint32_t line = 20; line < 24; line++, now += 4)
		CHECK(art_fetch(&a, line, now) == 0);
	CHECK(a.counts.fetch_cached == 4);
}

static void test_loads_hit_the_8_line_dcache_by_line(void)
{
	struct art a = accelerator(FLASH_ACR_DCEN);
	CHECK(art_load(&a, 0x100, 4) == WS5);
	CHECK(art_load(&a, 0x10c, 4) == 0);            /* same 16-byte line */
	CHECK(art_load(&a, 0x11e, 4) == 2 * WS5);      /* unaligned across two new lines */
	for (uint32_t line = 0; line < ART_DCACHE_LINES; line++)
		art_load(&a, 0x1000 + line * ART_LINE_BYTES, 1);
	CHECK(art_load(&a, 0x100, 1) == WS5);          /* evicted by eight newer lines */
	struct art uncached = accelerator(0);
	CHECK(art_load(&uncached, 0x100, 4) == WS5 && art_load(&uncached, 0x100, 4) == WS5);
}

/* The least recently used line by a search of every slot's last use, as the model first did. */
struct reference_lru {
	unsigned size;
	uint32_t line[ART_ICACHE_LINES];
	uint64_t used[ART_ICACHE_LINES]; /* 0: empty */
	uint64_t stamp;
};

static bool reference_access(struct reference_lru *c, uint32_t line)
{
	unsigned victim = 0;
	for (unsigned i = 0; i < c->size; i++)
		if (c->used[i] && c->line[i] == line)
			return c->used[i] = ++c->stamp, true;
	for (unsigned i = 0; i < c->size; i++) {
		if (!c->used[i]) {
			victim = i;
			break;
		}
		if (c->used[i] < c->used[victim])
			victim = i;
	}
	c->line[victim] = line;
	c->used[victim] = ++c->stamp;
	return false;
}

/* Loops over working sets near the caches' sizes, with jumps away, and resets in between: every
 * fetch and load hits or misses as in a cache searched slot by slot. */
static void test_the_caches_hit_as_a_least_recently_used_search_does(void)
{
	struct art a = accelerator(FLASH_ACR_ICEN | FLASH_ACR_DCEN);
	struct reference_lru i = {.size = ART_ICACHE_LINES}, d = {.size = ART_DCACHE_LINES};
	uint32_t x = 12345, mismatches = 0;
	uint64_t now = 0;
	for (unsigned step = 0; step < 200000; step++) {
		x = x * 1103515245u + 12345u;
		uint32_t span = (x >> 24) % 3 == 0 ? 300 : 70, line = (x >> 8) % span + (step / 5000) * 8;
		if (step % 2) {
			uint64_t before = a.counts.load_cached;
			art_load(&a, line % 20 * ART_LINE_BYTES, 4);
			mismatches += (a.counts.load_cached > before) != reference_access(&d, line % 20);
		} else {
			uint64_t before = a.counts.fetch_cached;
			a.current = ART_NO_LINE; /* each fetch asks the cache */
			art_fetch(&a, line, now += 10);
			mismatches += (a.counts.fetch_cached > before) != reference_access(&i, line);
		}
		if (step % 50000 == 49999) {
			art_set_acr(&a, WS5 | FLASH_ACR_ICRST | FLASH_ACR_DCRST);
			art_set_acr(&a, WS5 | FLASH_ACR_ICEN | FLASH_ACR_DCEN);
			i = (struct reference_lru){.size = ART_ICACHE_LINES};
			d = (struct reference_lru){.size = ART_DCACHE_LINES};
		}
	}
	CHECK(mismatches == 0);
}

static void test_wait_states_per_rm0090_table_10(void)
{
	CHECK(art_required_wait_states(24000000u, 30000000u) == 0);
	CHECK(art_required_wait_states(30000000u, 30000000u) == 0);
	CHECK(art_required_wait_states(30000001u, 30000000u) == 1);
	CHECK(art_required_wait_states(150000000u, 30000000u) == 4);
	CHECK(art_required_wait_states(168000000u, 30000000u) == 5);
}

int main(void)
{
	test_a_miss_waits_the_wait_states_and_the_line_then_runs_free();
	test_prefetch_hides_the_next_line_when_the_current_one_runs_long_enough();
	test_a_demand_fetch_waits_for_a_prefetch_in_progress();
	test_prefetches_requested_from_the_icache_do_not_queue_up();
	test_the_icache_keeps_64_lines_least_recently_used();
	test_a_loop_runs_from_the_icache_after_its_first_pass();
	test_loads_hit_the_8_line_dcache_by_line();
	test_the_caches_hit_as_a_least_recently_used_search_does();
	test_wait_states_per_rm0090_table_10();
	return check_summary("flash accelerator tests");
}
