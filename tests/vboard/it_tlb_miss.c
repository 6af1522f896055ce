/* IT blocks whose load or store misses the emulator's TLB (it_tlb_miss.S): the instruction after
 * each must run. The pages are in CCM, which nothing else in this image touches. */
#include <stdint.h>

#include "board.h"

#define CCM_BASE 0x10000000u
#define PAGES 8u

unsigned it_store_pages(uint32_t first_page, unsigned pages);
unsigned it_load_pages(uint32_t first_page, unsigned pages);

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
			  check("it_load_pages", it_load_pages(CCM_BASE + PAGES * 4096u, PAGES));
	put_str(passed == 2 ? "IT TLB MISS: all 2 passed\n" : "IT TLB MISS: FAILED\n");
	return 0;
}
