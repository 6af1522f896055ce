/* SysTick exception: tick counting with a small reload, FP context across the exception, and a
 * pqm4-style 64-bit time (overflow count * 2^24 + elapsed count) that must be monotonic and
 * advance exactly like the DWT cycle counter across several wraps. */
#include <stdint.h>

#include "board.h"

#define CSR_ENABLE 1u
#define CSR_TICKINT 2u
#define CSR_CLKSOURCE 4u

static volatile uint32_t ticks;
static volatile uint64_t overflowcnt;
static volatile int mode_hal_time;
static unsigned failures;

void sys_tick_handler(void)
{
	if (mode_hal_time)
		++overflowcnt;
	else
		++ticks;
}

static void expect(int ok, const char *what)
{
	put_str(ok ? "PASS " : "FAIL ");
	put_str(what);
	put_str("\n");
	if (!ok)
		failures++;
}

/* pqm4's hal_get_time: retry if the overflow count changed during the read. */
static uint64_t hal_time(void)
{
	for (;;) {
		uint64_t before = overflowcnt;
		uint64_t result = before * 16777216u + (0xffffffu - STK_CVR);
		if (overflowcnt == before)
			return result;
	}
}

static void tick_count(void)
{
	const uint32_t period = 1000, span = 200000;
	STK_RVR = period - 1;
	STK_CVR = 0;
	STK_CSR = CSR_CLKSOURCE | CSR_TICKINT | CSR_ENABLE;
	uint32_t t0 = DWT_CYCCNT, k0 = ticks;
	volatile float acc = 0.0f;
	float f = 0.0f;
	uint32_t elapsed;
	do { /* FP live across exceptions: the extended frame must preserve it */
		f += 0.5f;
		acc = f;
		elapsed = DWT_CYCCNT - t0;
	} while (elapsed < span);
	uint32_t k = ticks - k0;
	STK_CSR = 0;
	put_str("ticks ");
	put_u64(k);
	put_str(" in ");
	put_u64(elapsed);
	put_str(" cycles\n");
	expect(k + 1 >= elapsed / period && k <= elapsed / period + 1, "tick count matches cycles");
	uint32_t iterations = (uint32_t)(acc * 2.0f);
	expect(iterations > 0 && (float)iterations * 0.5f == acc, "FP state survives the handler");
}

static void hal_time_wraps(void)
{
	mode_hal_time = 1;
	STK_RVR = 0xffffff;
	STK_CVR = 0;
	STK_CSR = CSR_CLKSOURCE | CSR_TICKINT | CSR_ENABLE;
	uint64_t prev_time = 0, last_time = 0;
	uint32_t prev_cyc = 0;
	int have_prev = 0, monotonic = 1;
	unsigned exact = 0, compared = 0;
	while (overflowcnt < 4) {
		uint64_t oc = overflowcnt;
		uint32_t cyc = DWT_CYCCNT;
		uint64_t t = hal_time();
		if (t <= last_time)
			monotonic = 0;
		last_time = t;
		if (overflowcnt == oc) { /* no handler ran between the two reads */
			if (have_prev) {
				compared++;
				if (t - prev_time == (uint32_t)(cyc - prev_cyc))
					exact++;
			}
			prev_time = t;
			prev_cyc = cyc;
			have_prev = 1;
		}
		for (volatile int i = 0; i < 2000; i++)
			;
	}
	STK_CSR = 0;
	put_str("hal_time samples compared ");
	put_u64(compared);
	put_str(", exact ");
	put_u64(exact);
	put_str(", final time ");
	put_u64(last_time);
	put_str("\n");
	expect(monotonic, "hal_time is monotonic across 4 wraps");
	expect(compared > 100 && exact == compared, "hal_time advances exactly like CYCCNT");
}

/* WFI sleeps until the next tick: the wake-up must come from the handler. */
static void wfi_wakes(void)
{
	STK_RVR = 5000 - 1;
	STK_CVR = 0;
	uint32_t k0 = ticks;
	STK_CSR = CSR_CLKSOURCE | CSR_TICKINT | CSR_ENABLE;
	for (int i = 0; i < 3; i++)
		__asm__ volatile("wfi");
	uint32_t k = ticks - k0;
	STK_CSR = 0;
	expect(k == 3, "WFI wakes on each SysTick exception");
}

int main(void)
{
	board_setup();
	tick_count();
	wfi_wakes();
	hal_time_wraps();
	put_str(failures ? "SYSTICK: FAILED\n" : "SYSTICK: all passed\n");
	return 0;
}
