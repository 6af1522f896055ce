/* The DWT cycle counter: the exact model time while DEMCR.TRCENA and CYCCNTENA enable it. */
#include "check.h"
#include "fake_core.h"

#define SCB_DEMCR 0xe000edfcu
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL 0xe0001000u
#define DWT_CYCCNT 0xe0001004u

static void test_dwt_cyccnt_reads_the_exact_time_while_enabled(void)
{
	struct board *b = new_board("", false);
	write_at(b, 0, DWT_CTRL, 1);
	CHECK(read_at(b, 500, DWT_CYCCNT) == 0);   /* DEMCR.TRCENA off: not counting */
	write_at(b, 1000, SCB_DEMCR, DEMCR_TRCENA);
	CHECK(read_at(b, 1234, DWT_CYCCNT) == 234);
	write_at(b, 2000, DWT_CYCCNT, 5);
	CHECK(read_at(b, 2100, DWT_CYCCNT) == 105);
	write_at(b, 3000, DWT_CTRL, 0);
	CHECK(read_at(b, 9000, DWT_CYCCNT) == 1005);
	board_free(b);
}

int main(void)
{
	test_dwt_cyccnt_reads_the_exact_time_while_enabled();
	return check_summary("DWT tests");
}
