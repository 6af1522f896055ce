/* Unit tests of the peripherals alone: register accesses against a fake core whose clock the
 * test sets (no Unicorn, no firmware). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "flash_art.h"
#include "peripherals.h"
#include "uart.h"

#define RCC_APB1ENR 0x40023840u
#define RCC_AHB1ENR 0x40023830u
#define APB1ENR_USART2 (1u << 17)
#define USART2_SR 0x40004400u
#define USART2_DR 0x40004404u
#define USART2_CR1 0x4000440cu
#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)
#define CR1_UE (1u << 13)
#define SR_RXNE (1u << 5)
#define SR_TXE (1u << 7)
#define GPIOA_MODER 0x40020000u
#define STK_CSR 0xe000e010u
#define STK_RVR 0xe000e014u
#define STK_CVR 0xe000e018u
#define CSR_ENABLE (1u << 0)
#define CSR_TICKINT (1u << 1)
#define CSR_CLKSOURCE (1u << 2)
#define CSR_COUNTFLAG (1u << 16)
#define SCB_SHCSR 0xe000ed24u
#define SCB_DEMCR 0xe000edfcu
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL 0xe0001000u
#define DWT_CYCCNT 0xe0001004u
#define RCC_CR 0x40023800u
#define RCC_PLLCFGR 0x40023804u
#define CR_HSION (1u << 0)
#define CR_HSIRDY (1u << 1)
#define CR_HSEON (1u << 16)
#define CR_HSERDY (1u << 17)
#define CR_PLLON (1u << 24)
#define CR_PLLRDY (1u << 25)
#define RCC_CFGR 0x40023808u
#define FLASH_ACR 0x40023c00u
#define RCC_AHB2ENR 0x40023834u
#define RNG_CR 0x50060800u
#define RNG_SR 0x50060804u
#define RNG_DR 0x50060808u
/* RM0090 PLLCFGR: HSE 8 MHz / M=8 * N=336 / P=2 = 168 MHz; the same with P=8 is 42 MHz */
#define PLL_HSE_168MHZ (8u | 336u << 6 | 0u << 16 | 1u << 22)
#define PLL_HSE_42MHZ (8u | 336u << 6 | 3u << 16 | 1u << 22)
/* HSI 16 MHz / M=16 * N=192 / P=8 = 24 MHz, the Discovery's fallback */
#define PLL_HSI_24MHZ (16u | 192u << 6 | 3u << 16)
#define CFGR_SW_PLL 2u
#define CFGR_SWS_PLL (2u << 2)


/* The fake core: model time is whatever the test says; every upcall is recorded. */
static struct {
	uint64_t now;
	bool abandon;            /* access_time abandons the access, as before a replay */
	char failure[256];       /* the first error, like the real core */
	bool stopped;
	enum periph_stop stop;
	int reschedules;
	volatile int interrupted;
} fake;

static bool fake_access_time(void *core, uint64_t *now)
{
	(void)core;
	*now = fake.now;
	return !fake.abandon;
}

static void fake_fail(void *core, const char *message)
{
	(void)core;
	if (!fake.failure[0])
		snprintf(fake.failure, sizeof fake.failure, "%s", message);
}

static void fake_stop(void *core, enum periph_stop why)
{
	(void)core;
	fake.stopped = true;
	fake.stop = why;
}

static void fake_reschedule(void *core)
{
	(void)core;
	fake.reschedules++;
}

static struct uart_host uart;

/* A board just out of reset, with `input` waiting on its UART. */
static struct periph *new_board(const char *input, bool input_ended)
{
	static const struct periph_core core = {NULL, fake_access_time, fake_fail, fake_stop,
						 fake_reschedule, &fake.interrupted};
	memset(&fake, 0, sizeof fake);
	memset(&uart, 0, sizeof uart);
	uart.in_fd = uart.out_fd = uart.pty_slave_fd = -1;
	uart.rx_len = strlen(input);
	memcpy(uart.rx, input, uart.rx_len);
	uart.eof = input_ended;
	return periph_new(&core, &uart);
}

static uint32_t read_at(struct periph *p, uint64_t now, uint32_t addr)
{
	fake.now = now;
	return periph_read(p, addr, 4);
}

static void write_at(struct periph *p, uint64_t now, uint32_t addr, uint32_t value)
{
	fake.now = now;
	periph_write(p, addr, 4, value);
}

static void test_systick_counts_down_from_reload_with_the_clock(void)
{
	struct periph *p = new_board("", false);
	write_at(p, 0, STK_RVR, 999);
	write_at(p, 100, STK_CSR, CSR_ENABLE | CSR_CLKSOURCE);
	CHECK(read_at(p, 100, STK_RVR) == 999);
	CHECK(read_at(p, 100, STK_CVR) == 0);      /* enabled at 0: reloads on the next cycle */
	CHECK(read_at(p, 101, STK_CVR) == 999);
	CHECK(read_at(p, 350, STK_CVR) == 750);
	CHECK(read_at(p, 1100, STK_CVR) == 0);
	CHECK(read_at(p, 1101, STK_CVR) == 999);
	write_at(p, 1200, STK_CSR, CSR_CLKSOURCE); /* disabled: the counter holds its value */
	CHECK(read_at(p, 5000, STK_CVR) == 900);
	CHECK(!fake.failure[0]);
	periph_free(p);
}

static void test_countflag_is_set_by_a_wrap_and_cleared_by_reading_ctrl(void)
{
	struct periph *p = new_board("", false);
	write_at(p, 0, STK_RVR, 99);
	write_at(p, 0, STK_CSR, CSR_ENABLE | CSR_CLKSOURCE);
	CHECK(!(read_at(p, 99, STK_CSR) & CSR_COUNTFLAG));
	CHECK(read_at(p, 100, STK_CSR) & CSR_COUNTFLAG);
	CHECK(!(read_at(p, 101, STK_CSR) & CSR_COUNTFLAG));
	CHECK(read_at(p, 250, STK_CSR) & CSR_COUNTFLAG);
	periph_free(p);
}

static void test_the_tick_event_is_rescheduled_when_ctrl_or_load_change(void)
{
	struct periph *p = new_board("", false);
	write_at(p, 0, STK_RVR, 999);
	CHECK(fake.reschedules == 1);
	CHECK(periph_next_tick_event(p) == UINT64_MAX);
	write_at(p, 0, STK_CSR, CSR_ENABLE | CSR_TICKINT | CSR_CLKSOURCE);
	CHECK(fake.reschedules == 2 && periph_next_tick_event(p) == 1000);
	write_at(p, 300, STK_RVR, 499);            /* the count in progress finishes first */
	CHECK(fake.reschedules == 3 && periph_next_tick_event(p) == 1000);
	write_at(p, 400, STK_CVR, 0);              /* cleared: the new reload starts now */
	CHECK(fake.reschedules == 4 && periph_next_tick_event(p) == 900);
	periph_systick_advance(p, 899);
	CHECK(!periph_systick_pending(p));
	periph_systick_advance(p, 900);
	CHECK(periph_systick_pending(p) && periph_next_tick_event(p) == 1400);
	periph_systick_taken(p);
	CHECK(!periph_systick_pending(p));
	write_at(p, 1000, STK_CSR, CSR_ENABLE | CSR_CLKSOURCE);
	CHECK(fake.reschedules == 5 && periph_next_tick_event(p) == UINT64_MAX);
	periph_free(p);
}

static void test_an_abandoned_access_changes_nothing(void)
{
	struct periph *p = new_board("", false);
	write_at(p, 0, STK_RVR, 99);
	write_at(p, 0, STK_CSR, CSR_ENABLE | CSR_CLKSOURCE);
	int reschedules = fake.reschedules;
	fake.abandon = true;
	write_at(p, 150, STK_CSR, 0);
	(void)read_at(p, 150, STK_CSR);
	fake.abandon = false;
	CHECK(fake.reschedules == reschedules);
	CHECK(read_at(p, 150, STK_CSR) == (CSR_ENABLE | CSR_CLKSOURCE | CSR_COUNTFLAG));
	periph_free(p);
}

static void test_dwt_cyccnt_reads_the_exact_time_while_enabled(void)
{
	struct periph *p = new_board("", false);
	write_at(p, 0, DWT_CTRL, 1);
	CHECK(read_at(p, 500, DWT_CYCCNT) == 0);   /* DEMCR.TRCENA off: not counting */
	write_at(p, 1000, SCB_DEMCR, DEMCR_TRCENA);
	CHECK(read_at(p, 1234, DWT_CYCCNT) == 234);
	write_at(p, 2000, DWT_CYCCNT, 5);
	CHECK(read_at(p, 2100, DWT_CYCCNT) == 105);
	write_at(p, 3000, DWT_CTRL, 0);
	CHECK(read_at(p, 9000, DWT_CYCCNT) == 1005);
	periph_free(p);
}

static void test_an_unclocked_peripheral_fails_naming_its_enable_bit(void)
{
	struct periph *p = new_board("x", false);
	(void)read_at(p, 0, USART2_SR);
	CHECK(!strcmp(fake.failure, "access to USART2 with its clock disabled (RCC USART2EN=0) at "
				    "address 0x40004400"));
	periph_free(p);

	p = new_board("", false);
	write_at(p, 0, GPIOA_MODER, 0);
	CHECK(!strcmp(fake.failure, "access to GPIOA with its clock disabled (RCC GPIOAEN=0) at "
				    "address 0x40020000"));
	memset(fake.failure, 0, sizeof fake.failure);
	write_at(p, 0, RCC_AHB1ENR, 1);
	write_at(p, 0, GPIOA_MODER, 0x5);
	CHECK(read_at(p, 0, GPIOA_MODER) == 0x5 && !fake.failure[0]);
	periph_free(p);
}

/* USART2 clocked, enabled, receiving and transmitting. */
static struct periph *new_board_with_usart(const char *input, bool input_ended)
{
	struct periph *p = new_board(input, input_ended);
	write_at(p, 0, RCC_APB1ENR, APB1ENR_USART2);
	write_at(p, 0, USART2_CR1, CR1_UE | CR1_RE | CR1_TE);
	return p;
}

static void test_usart_reports_input_present_then_absent(void)
{
	struct periph *p = new_board_with_usart("hi", false);
	CHECK((read_at(p, 0, USART2_SR) & (SR_RXNE | SR_TXE)) == (SR_RXNE | SR_TXE));
	CHECK(read_at(p, 0, USART2_DR) == 'h');
	CHECK(read_at(p, 0, USART2_SR) & SR_RXNE);
	CHECK(read_at(p, 0, USART2_DR) == 'i');
	CHECK((read_at(p, 0, USART2_SR) & (SR_RXNE | SR_TXE)) == SR_TXE);
	CHECK(!fake.failure[0] && !fake.stopped);
	periph_free(p);
}

static void test_usart_transmits_a_data_register_write(void)
{
	struct periph *p = new_board_with_usart("", false);
	write_at(p, 0, USART2_DR, 'A');
	CHECK(uart.tx_len == 1 && uart.tx[0] == 'A');
	write_at(p, 0, USART2_CR1, CR1_UE | CR1_RE);
	write_at(p, 0, USART2_DR, 'B');
	CHECK(uart.tx_len == 1);
	CHECK(!strcmp(fake.failure, "USART2 transmit with the transmitter disabled (CR1=0x2004) at "
				    "address 0x40004404"));
	periph_free(p);
}

static void test_waiting_for_input_after_it_ended_stops_the_run(void)
{
	struct periph *p = new_board_with_usart("", true);
	for (int poll = 1; poll < 8; poll++) /* a transmit loop's status reads do not wait */
		CHECK(!(read_at(p, 0, USART2_SR) & SR_RXNE) && !fake.stopped);
	(void)read_at(p, 0, USART2_SR);
	CHECK(fake.stopped && fake.stop == PERIPH_STOP_INPUT_EOF && !fake.failure[0]);
	periph_free(p);
}

static void test_waiting_for_input_with_the_receiver_off_fails(void)
{
	struct periph *p = new_board_with_usart("", true);
	write_at(p, 0, USART2_CR1, CR1_UE | CR1_TE);
	for (int poll = 0; poll < 8; poll++)
		(void)read_at(p, 0, USART2_SR);
	CHECK(!strcmp(fake.failure, "firmware waits for USART2 input with the receiver disabled "
				    "(CR1=0x2008) at address 0x40004400"));
	periph_free(p);
}

static void test_an_unsupported_register_fails_with_its_address(void)
{
	struct periph *p = new_board("", false);
	write_at(p, 0, SCB_SHCSR, 0);
	CHECK(!strcmp(fake.failure, "write to unsupported register SCS+0xd24 at address 0xe000ed24"));
	periph_free(p);

	p = new_board("", false);
	(void)read_at(p, 0, 0x40023900);
	CHECK(!strcmp(fake.failure, "read from unsupported register RCC+0x100 at address 0x40023900"));
	periph_free(p);

	p = new_board("", false);
	fake.now = 0;
	(void)periph_read(p, DWT_CYCCNT, 2);
	CHECK(!strcmp(fake.failure, "2-byte read from DWT+0x004 (only aligned 32-bit accesses are "
				    "supported) at address 0xe0001004"));
	periph_free(p);
}

static void test_the_pll_clock_needs_the_flash_wait_states_of_rm0090(void)
{
	struct periph *p = new_board("", false);
	CHECK(periph_hclk(p) == 16000000u); /* HSI after reset */
	write_at(p, 0, RCC_CR, CR_HSION | CR_HSEON | CR_PLLON);
	write_at(p, 0, RCC_PLLCFGR, PLL_HSE_168MHZ);
	write_at(p, 0, FLASH_ACR, 0x700u | 5u); /* PRFTEN ICEN DCEN, 5 wait states */
	write_at(p, 0, RCC_CFGR, CFGR_SW_PLL);
	CHECK(periph_hclk(p) == 168000000u);
	CHECK(art_wait_states(periph_flash_art(p)) == 5);
	CHECK((read_at(p, 0, FLASH_ACR) & 0x707u) == 0x705u);
	CHECK(fake.reschedules == 1); /* the core learns of the new flash timing */
	CHECK(!fake.failure[0]);
	write_at(p, 0, FLASH_ACR, 0x700u | 4u); /* one too few for 168 MHz */
	CHECK(!strcmp(fake.failure, "4 flash wait states at HCLK 168000000 Hz; RM0090 table 10 "
				    "needs 5 at 2.7-3.6 V at address 0x40023c00"));
	periph_free(p);

	p = new_board("", false);
	write_at(p, 0, RCC_CR, CR_HSION | CR_HSEON | CR_PLLON);
	write_at(p, 0, RCC_PLLCFGR, PLL_HSE_42MHZ);
	write_at(p, 0, RCC_CFGR, CFGR_SW_PLL); /* 42 MHz needs 1 wait state, the ACR has 0 */
	CHECK(!strcmp(fake.failure, "0 flash wait states at HCLK 42000000 Hz; RM0090 table 10 "
				    "needs 1 at 2.7-3.6 V at address 0x40023808"));
	periph_free(p);
}

/* Without its HSE the board's HSE never becomes ready, nor a PLL fed by it, and the system clock
 * stays where it was when asked to switch to that PLL; a PLL fed by the HSI locks and is taken. */
static void test_without_the_hse_only_the_hsi_clocks_the_pll(void)
{
	struct periph *p = new_board("", false);
	periph_remove_hse(p);
	write_at(p, 0, RCC_CR, CR_HSION | CR_HSEON);
	CHECK((read_at(p, 0, RCC_CR) & (CR_HSIRDY | CR_HSERDY)) == CR_HSIRDY);
	write_at(p, 0, RCC_PLLCFGR, PLL_HSE_42MHZ);
	write_at(p, 0, RCC_CR, CR_HSION | CR_HSEON | CR_PLLON);
	CHECK(!(read_at(p, 0, RCC_CR) & CR_PLLRDY));
	write_at(p, 0, FLASH_ACR, 0x700u | 1u);
	write_at(p, 0, RCC_CFGR, CFGR_SW_PLL);
	CHECK((read_at(p, 0, RCC_CFGR) & 0xcu) == 0); /* SWS: still the HSI */
	CHECK(periph_hclk(p) == 16000000u);

	write_at(p, 0, RCC_CR, CR_HSION);
	write_at(p, 0, RCC_PLLCFGR, PLL_HSI_24MHZ);
	write_at(p, 0, RCC_CR, CR_HSION | CR_PLLON); /* the pending switch happens once the PLL is ready */
	CHECK(read_at(p, 0, RCC_CR) & CR_PLLRDY);
	CHECK((read_at(p, 0, RCC_CFGR) & 0xcu) == CFGR_SWS_PLL);
	CHECK(periph_hclk(p) == 24000000u);
	CHECK(!fake.failure[0]);
	periph_free(p);

	p = new_board("", false); /* with its HSE, the same requests switch to the HSE's PLL */
	write_at(p, 0, RCC_CR, CR_HSION | CR_HSEON | CR_PLLON);
	write_at(p, 0, RCC_PLLCFGR, PLL_HSE_42MHZ);
	CHECK((read_at(p, 0, RCC_CR) & (CR_HSERDY | CR_PLLRDY)) == (CR_HSERDY | CR_PLLRDY));
	write_at(p, 0, FLASH_ACR, 0x700u | 1u);
	write_at(p, 0, RCC_CFGR, CFGR_SW_PLL);
	CHECK(periph_hclk(p) == 42000000u);
	periph_free(p);
}

/* The RNG (pqm4's images): clocked by RNGEN, nothing ready until enabled, then a number at every
 * read, each new; its interrupt is refused. */
static void test_the_rng_gives_numbers_once_clocked_and_enabled(void)
{
	struct periph *p = new_board("", false);
	read_at(p, 0, RNG_SR);
	CHECK(!strcmp(fake.failure, "access to RNG with its clock disabled (RCC RNGEN=0) at address 0x50060804"));
	periph_free(p);

	p = new_board("", false);
	write_at(p, 0, RCC_AHB2ENR, 1u << 6);
	CHECK(read_at(p, 0, RNG_SR) == 0);
	write_at(p, 0, RNG_CR, 1u << 2);
	uint32_t numbers[8];
	for (int i = 0; i < 8; i++) {
		CHECK(read_at(p, 0, RNG_SR) == 1u);
		numbers[i] = read_at(p, 0, RNG_DR);
		for (int j = 0; j < i; j++)
			CHECK(numbers[j] != numbers[i]);
	}
	CHECK(!fake.failure[0]);
	write_at(p, 0, RNG_CR, 3u << 2);
	CHECK(!strcmp(fake.failure, "RNG interrupts are not emulated (RNG_CR=0x0000000c) at address 0x50060800"));
	periph_free(p);
}

/* A stand-in board's noise: every counter read is late by 0..max cycles, drawn afresh each time,
 * never more, and not always the same. */
static void test_cycle_jitter_makes_each_counter_read_late_by_at_most_its_maximum(void)
{
	struct periph *p = new_board("", false);
	periph_set_cycle_jitter(p, 16, 7);
	write_at(p, 0, STK_RVR, 999999);
	write_at(p, 0, STK_CSR, CSR_ENABLE | CSR_CLKSOURCE);
	write_at(p, 0, SCB_DEMCR, DEMCR_TRCENA);
	write_at(p, 0, DWT_CTRL, 1);
	bool late[17] = {false};
	for (uint64_t now = 1000; now < 1000 + 400 * 10; now += 10) {
		uint32_t systick_late = 999999 - (uint32_t)((now - 1) % 1000000) - read_at(p, now, STK_CVR);
		uint32_t cyccnt_late = read_at(p, now, DWT_CYCCNT) - (uint32_t)now;
		CHECK(systick_late <= 16 && cyccnt_late <= 16);
		late[systick_late <= 16 ? systick_late : 0] = true;
	}
	unsigned seen = 0;
	for (int i = 0; i <= 16; i++)
		seen += late[i];
	CHECK(seen > 10); /* 400 draws of 17 values */
	periph_free(p);
}

int main(void)
{
	test_cycle_jitter_makes_each_counter_read_late_by_at_most_its_maximum();
	test_the_pll_clock_needs_the_flash_wait_states_of_rm0090();
	test_without_the_hse_only_the_hsi_clocks_the_pll();
	test_the_rng_gives_numbers_once_clocked_and_enabled();
	test_systick_counts_down_from_reload_with_the_clock();
	test_countflag_is_set_by_a_wrap_and_cleared_by_reading_ctrl();
	test_the_tick_event_is_rescheduled_when_ctrl_or_load_change();
	test_an_abandoned_access_changes_nothing();
	test_dwt_cyccnt_reads_the_exact_time_while_enabled();
	test_an_unclocked_peripheral_fails_naming_its_enable_bit();
	test_usart_reports_input_present_then_absent();
	test_usart_transmits_a_data_register_write();
	test_waiting_for_input_after_it_ended_stops_the_run();
	test_waiting_for_input_with_the_receiver_off_fails();
	test_an_unsupported_register_fails_with_its_address();
	return check_summary("peripheral tests");
}
