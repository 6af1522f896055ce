/* IT blocks whose load or store misses the emulator's TLB, or stores into memory its guard watch
 * hooks (it_tlb_miss.S): the instruction after each must run. The pages are in CCM, which nothing
 * else in this image touches; the watched memory is a harness's guarded object, which the
 * emulator watches in any image that has the harness's state and its disarm function. */
#include <stdint.h>

#include "board.h"

#define CCM_BASE 0x10000000u
#define PAGES 8u

unsigned it_store_pages(uint32_t first_page, unsigned pages);
unsigned it_load_pages(uint32_t first_page, unsigned pages);
unsigned it_store_watched(volatile uint32_t *word, unsigned stores);

/* What the emulator's guard watch looks for (firmware/include/pqscope/guard.h's names). */
volatile uint32_t pqs_guarded_state[32];
volatile uint32_t pqs_guarded_word[4];

__attribute__((noinline)) void pqs_guard_disarm(void)
{
	pqs_guarded_state[16] = 0;
}

static unsigned check(const char *name, unsigned ran)
{
	put_str(ran == PAGES ? "PASS " : "FAIL ");
	put_str(name);
	put_str(": the instruction after the IT block ran ");
	put_u64(ran);
	put_str(" times of ");
	put_u64(PAGES);
	put_str("\n");
	return ran == PAGES;
}

int main(void)
{
	board_setup();
	unsigned passed = check("it_store_pages", it_store_pages(CCM_BASE, PAGES)) +
			  check("it_load_pages", it_load_pages(CCM_BASE + PAGES * 4096u, PAGES)) +
			  check("it_store_watched", it_store_watched(pqs_guarded_word, PAGES));
	pqs_guard_disarm();
	put_str(passed == 3 ? "IT TLB MISS: all 3 passed\n" : "IT TLB MISS: FAILED\n");
	return 0;
}
