/* The SysTick timer: counting with the model clock, COUNTFLAG, the rescheduling of its event, an
 * abandoned access. */
#include "check.h"
#include "fake_core.h"

#define STK_CSR 0xe000e010u
#define STK_RVR 0xe000e014u
#define STK_CVR 0xe000e018u
#define CSR_ENABLE (1u << 0)
#define CSR_TICKINT (1u << 1)
#define CSR_CLKSOURCE (1u << 2)
#define CSR_COUNTFLAG (1u << 16)

static void test_systick_counts_down_from_reload_with_the_clock(void)
{
	struct board *b = new_board("", false);
	write_at(b, 0, STK_RVR, 999);
	write_at(b, 100, STK_CSR, CSR_ENABLE | CSR_CLKSOURCE);
	CHECK(read_at(b, 100, STK_RVR) == 999);
	CHECK(read_at(b, 100, STK_CVR) == 0);      /* enabled at 0: reloads on the next cycle */
	CHECK(read_at(b, 101, STK_CVR) == 999);
	CHECK(read_at(b, 350, STK_CVR) == 750);
	CHECK(read_at(b, 1100, STK_CVR) == 0);
	CHECK(read_at(b, 1101, STK_CVR) == 999);
	write_at(b, 1200, STK_CSR, CSR_CLKSOURCE); /* disabled: the counter holds its value */
	CHECK(read_at(b, 5000, STK_CVR) == 900);
	CHECK(!fake.failure[0]);
	board_free(b);
}

static void test_countflag_is_set_by_a_wrap_and_cleared_by_reading_ctrl(void)
{
	struct board *b = new_board("", false);
	write_at(b, 0, STK_RVR, 99);
	write_at(b, 0, STK_CSR, CSR_ENABLE | CSR_CLKSOURCE);
	CHECK(!(read_at(b, 99, STK_CSR) & CSR_COUNTFLAG));
	CHECK(read_at(b, 100, STK_CSR) & CSR_COUNTFLAG);
	CHECK(!(read_at(b, 101, STK_CSR) & CSR_COUNTFLAG));
	CHECK(read_at(b, 250, STK_CSR) & CSR_COUNTFLAG);
	board_free(b);
}

static void test_the_tick_event_is_rescheduled_when_ctrl_or_load_change(void)
{
	struct board *b = new_board("", false);
	write_at(b, 0, STK_RVR, 999);
	CHECK(fake.reschedules == 1);
	CHECK(systick_next_event(&b->systick) == UINT64_MAX);
	write_at(b, 0, STK_CSR, CSR_ENABLE | CSR_TICKINT | CSR_CLKSOURCE);
	CHECK(fake.reschedules == 2 && systick_next_event(&b->systick) == 1000);
	write_at(b, 300, STK_RVR, 499);            /* the count in progress finishes first */
	CHECK(fake.reschedules == 3 && systick_next_event(&b->systick) == 1000);
	write_at(b, 400, STK_CVR, 0);              /* cleared: the new reload starts now */
	CHECK(fake.reschedules == 4 && systick_next_event(&b->systick) == 900);
	systick_advance(&b->systick, 899);
	CHECK(!systick_pending(&b->systick));
	systick_advance(&b->systick, 900);
	CHECK(systick_pending(&b->systick) && systick_next_event(&b->systick) == 1400);
	systick_taken(&b->systick);
	CHECK(!systick_pending(&b->systick));
	write_at(b, 1000, STK_CSR, CSR_ENABLE | CSR_CLKSOURCE);
	CHECK(fake.reschedules == 5 && systick_next_event(&b->systick) == UINT64_MAX);
	board_free(b);
}

static void test_an_abandoned_access_changes_nothing(void)
{
	struct board *b = new_board("", false);
	write_at(b, 0, STK_RVR, 99);
	write_at(b, 0, STK_CSR, CSR_ENABLE | CSR_CLKSOURCE);
	int reschedules = fake.reschedules;
	fake.abandon = true;
	write_at(b, 150, STK_CSR, 0);
	(void)read_at(b, 150, STK_CSR);
	fake.abandon = false;
	CHECK(fake.reschedules == reschedules);
	CHECK(read_at(b, 150, STK_CSR) == (CSR_ENABLE | CSR_CLKSOURCE | CSR_COUNTFLAG));
	board_free(b);
}

int main(void)
{
	test_systick_counts_down_from_reload_with_the_clock();
	test_countflag_is_set_by_a_wrap_and_cleared_by_reading_ctrl();
	test_the_tick_event_is_rescheduled_when_ctrl_or_load_change();
	test_an_abandoned_access_changes_nothing();
	return check_summary("SysTick tests");
}
