/* The STM32L4R5's devices as pqm4's clock and UART bring-up uses them (common/hal-opencm3.c, the
 * NUCLEO_L4R5_BOARD branch): the 20 MHz PLL from HSI16 at 0 wait states, 120 MHz only with
 * RM0432's wait states, HSI48 for the RNG, LPUART1 on port G behind PWR_CR2.IOSV, the identifiers. */
#include "check.h"
#include "fake_core.h"

#define RCC 0x40021000u
#define RCC_CR_AT (RCC + 0x00)
#define RCC_CFGR_AT (RCC + 0x08)
#define RCC_PLLCFGR_AT (RCC + 0x0c)
#define RCC_AHB2ENR_AT (RCC + 0x4c)
#define RCC_APB1ENR1_AT (RCC + 0x58)
#define RCC_APB1ENR2_AT (RCC + 0x5c)
#define RCC_CRRCR (RCC + 0x98)
#define CR_HSION (1u << 8)
#define CR_HSIRDY (1u << 10)
#define CR_PLLON (1u << 24)
#define CR_PLLRDY (1u << 25)
#define CFGR_SW_PLL 3u
#define CFGR_SWS_PLL (3u << 2)
/* HSI16 / M=1 * N=10 / R=8 = 20 MHz (pqm4's benchmark clock); N=15, R=2: 120 MHz */
#define PLL_20MHZ (2u | 0u << 4 | 10u << 8 | 1u << 24 | 3u << 25)
#define PLL_120MHZ (2u | 0u << 4 | 15u << 8 | 1u << 24 | 0u << 25)
#define FLASH_ACR 0x40022000u
#define ACR_PRFTEN_ICEN_DCEN 0x700u
#define PWR_CR2 0x40007004u
#define PWR_SR2 0x40007014u
#define GPIOG_MODER 0x48001800u
#define LPUART1_CR1 0x40008000u
#define LPUART1_BRR 0x4000800cu
#define LPUART1_ISR 0x4000801cu
#define LPUART1_RDR 0x40008024u
#define LPUART1_TDR 0x40008028u
#define RNG_CR 0x50060800u
#define RNG_SR 0x50060804u
#define RNG_DR 0x50060808u

static struct board *new_l4r5(const char *input)
{
	return new_chip_board(&chip_stm32l4r5, input, false);
}

static void pll_on(struct board *b, uint32_t pllcfgr)
{
	write_at(b, 0, RCC_CR_AT, read_at(b, 0, RCC_CR_AT) | CR_HSION);
	write_at(b, 0, RCC_PLLCFGR_AT, pllcfgr);
	write_at(b, 0, RCC_CR_AT, read_at(b, 0, RCC_CR_AT) | CR_PLLON);
}

static void test_pqm4s_benchmark_clock_is_20_mhz_from_hsi16_at_0_wait_states(void)
{
	struct board *b = new_l4r5("");
	CHECK(rcc_hclk(&b->rcc) == 4000000u); /* MSI after reset */
	CHECK(read_at(b, 0, FLASH_ACR) == 0x600u); /* RM0432: both caches on after reset */
	CHECK(read_at(b, 0, RCC_CR_AT) & 0x2u);      /* MSIRDY */
	pll_on(b, PLL_20MHZ);
	CHECK((read_at(b, 0, RCC_CR_AT) & (CR_HSIRDY | CR_PLLRDY)) == (CR_HSIRDY | CR_PLLRDY));
	write_at(b, 0, FLASH_ACR, ACR_PRFTEN_ICEN_DCEN | 0u);
	write_at(b, 0, RCC_CFGR_AT, CFGR_SW_PLL);
	CHECK((read_at(b, 0, RCC_CFGR_AT) & 0xcu) == CFGR_SWS_PLL);
	CHECK(rcc_hclk(&b->rcc) == 20000000u);
	CHECK(!fake.failure[0]);
	board_free(b);
}

static void test_120_mhz_needs_rm0432s_5_wait_states(void)
{
	struct board *b = new_l4r5("");
	pll_on(b, PLL_120MHZ);
	write_at(b, 0, FLASH_ACR, ACR_PRFTEN_ICEN_DCEN | 4u);
	write_at(b, 0, RCC_CFGR_AT, CFGR_SW_PLL);
	CHECK(rcc_hclk(&b->rcc) == 120000000u);
	CHECK(!strcmp(fake.failure, "4 flash wait states at HCLK 120000000 Hz; RM0432 3.3.3 needs 5 in "
				    "voltage range 1 at address 0x40021008"));
	board_free(b);

	b = new_l4r5("");
	pll_on(b, PLL_120MHZ);
	write_at(b, 0, FLASH_ACR, ACR_PRFTEN_ICEN_DCEN | 5u);
	write_at(b, 0, RCC_CFGR_AT, CFGR_SW_PLL);
	CHECK(rcc_hclk(&b->rcc) == 120000000u && !fake.failure[0]);
	board_free(b);
}

/* The PLL never locks without an input: a bring-up that forgot HSI16 waits (boundedly) for PLLRDY. */
static void test_the_pll_is_ready_only_once_its_input_is(void)
{
	struct board *b = new_l4r5("");
	write_at(b, 0, RCC_PLLCFGR_AT, PLL_20MHZ);
	write_at(b, 0, RCC_CR_AT, read_at(b, 0, RCC_CR_AT) | CR_PLLON);
	CHECK(!(read_at(b, 0, RCC_CR_AT) & CR_PLLRDY));
	write_at(b, 0, RCC_CFGR_AT, CFGR_SW_PLL);
	CHECK((read_at(b, 0, RCC_CFGR_AT) & 0xcu) == 0 && rcc_hclk(&b->rcc) == 4000000u); /* still MSI */
	board_free(b);
}

static void lpuart_on(struct board *b, uint32_t brr)
{
	write_at(b, 0, RCC_APB1ENR1_AT, 1u << 28); /* PWREN */
	write_at(b, 0, RCC_APB1ENR2_AT, 1u << 0);  /* LPUART1EN */
	write_at(b, 0, RCC_AHB2ENR_AT, 1u << 6);   /* GPIOGEN */
	write_at(b, 0, LPUART1_BRR, brr);
	write_at(b, 0, LPUART1_CR1, 1u << 0 | 1u << 2 | 1u << 3); /* UE RE TE */
}

static void test_lpuart1_talks_to_the_host_once_vddio2_is_valid(void)
{
	struct board *b = new_l4r5("k");
	lpuart_on(b, 0x208d5); /* 38400 baud at 20 MHz, as libopencm3 computes it */
	write_at(b, 0, LPUART1_TDR, 'x');
	CHECK(!strcmp(fake.failure, "LPUART1 used while its pins' supply VDDIO2 is off "
				    "(PWR_CR2.IOSV=0) at address 0x40008028"));
	board_free(b);

	b = new_l4r5("k");
	lpuart_on(b, 0x208d5);
	write_at(b, 0, PWR_CR2, 1u << 9);
	CHECK(read_at(b, 0, GPIOG_MODER) == 0xffffffffu);
	CHECK((read_at(b, 0, LPUART1_ISR) & (1u << 5 | 1u << 7)) == (1u << 5 | 1u << 7)); /* RXNE TXE */
	CHECK(read_at(b, 0, LPUART1_RDR) == 'k');
	write_at(b, 0, LPUART1_TDR, 'x');
	CHECK(uart.tx_len == 1 && uart.tx[0] == 'x' && !fake.failure[0]);
	CHECK(read_at(b, 0, PWR_SR2) == 0); /* VOSF: the voltage scaling is done */
	board_free(b);
}

static void test_lpuart1_refuses_a_divider_below_0x300(void)
{
	struct board *b = new_l4r5("");
	lpuart_on(b, 0x2ff);
	write_at(b, 0, PWR_CR2, 1u << 9);
	write_at(b, 0, LPUART1_TDR, 'x');
	CHECK(!strcmp(fake.failure, "LPUART1 used with BRR=0x2ff, below the smallest divider 0x300 "
				    "(RM0432, LPUART_BRR) at address 0x40008028"));
	board_free(b);
}

static void test_the_rng_needs_hsi48(void)
{
	struct board *b = new_l4r5("");
	write_at(b, 0, RCC_AHB2ENR_AT, 1u << 18); /* RNGEN */
	write_at(b, 0, RNG_CR, 1u << 2);
	(void)read_at(b, 0, RNG_SR);
	CHECK(!strcmp(fake.failure, "RNG read without its 48 MHz clock (RCC_CRRCR.HSI48ON=0 or "
				    "RCC_CCIPR.CLK48SEL not HSI48): no number would ever be ready at "
				    "address 0x50060804"));
	board_free(b);

	b = new_l4r5("");
	write_at(b, 0, RCC_CRRCR, 1u);
	CHECK(read_at(b, 0, RCC_CRRCR) == 3u); /* HSI48RDY */
	write_at(b, 0, RCC_AHB2ENR_AT, 1u << 18);
	write_at(b, 0, RNG_CR, 1u << 2);
	CHECK(read_at(b, 0, RNG_SR) == 1u);
	uint32_t first = read_at(b, 0, RNG_DR);
	CHECK(first != read_at(b, 0, RNG_DR) && !fake.failure[0]);
	board_free(b);
}

static void test_the_dbgmcu_identifies_an_stm32l4r5(void)
{
	struct board *b = new_l4r5("");
	CHECK((read_at(b, 0, 0xe0042000u) & 0xfffu) == 0x470u);
	board_free(b);
}

/* The Discovery's peripherals are not where the L4R5 has them: an image for the wrong board fails. */
static void test_the_discoverys_rcc_is_not_on_the_l4r5(void)
{
	struct board *b = new_l4r5("");
	(void)read_at(b, 0, 0x40023800u);
	CHECK(!strcmp(fake.failure, "read from address 0x40023800 outside the peripherals"));
	board_free(b);
}

int main(void)
{
	test_pqm4s_benchmark_clock_is_20_mhz_from_hsi16_at_0_wait_states();
	test_120_mhz_needs_rm0432s_5_wait_states();
	test_the_pll_is_ready_only_once_its_input_is();
	test_lpuart1_talks_to_the_host_once_vddio2_is_valid();
	test_lpuart1_refuses_a_divider_below_0x300();
	test_the_rng_needs_hsi48();
	test_the_dbgmcu_identifies_an_stm32l4r5();
	test_the_discoverys_rcc_is_not_on_the_l4r5();
	return check_summary("vboard-l4r5");
}
