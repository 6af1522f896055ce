/* The RCC: the system clock switch and HCLK against the flash wait states of RM0090, with and
 * without the HSE. */
#include "check.h"
#include "fake_core.h"

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
/* RM0090 PLLCFGR: HSE 8 MHz / M=8 * N=336 / P=2 = 168 MHz; the same with P=8 is 42 MHz */
#define PLL_HSE_168MHZ (8u | 336u << 6 | 0u << 16 | 1u << 22)
#define PLL_HSE_42MHZ (8u | 336u << 6 | 3u << 16 | 1u << 22)
/* HSI 16 MHz / M=16 * N=192 / P=8 = 24 MHz, the Discovery's fallback */
#define PLL_HSI_24MHZ (16u | 192u << 6 | 3u << 16)
#define CFGR_SW_PLL 2u
#define CFGR_SWS_PLL (2u << 2)

static void test_the_pll_clock_needs_the_flash_wait_states_of_rm0090(void)
{
	struct board *b = new_board("", false);
	CHECK(rcc_hclk(&b->rcc) == 16000000u); /* HSI after reset */
	write_at(b, 0, RCC_CR, CR_HSION | CR_HSEON | CR_PLLON);
	write_at(b, 0, RCC_PLLCFGR, PLL_HSE_168MHZ);
	write_at(b, 0, FLASH_ACR, 0x700u | 5u); /* PRFTEN ICEN DCEN, 5 wait states */
	write_at(b, 0, RCC_CFGR, CFGR_SW_PLL);
	CHECK(rcc_hclk(&b->rcc) == 168000000u);
	CHECK(art_wait_states(&b->flash.art) == 5);
	CHECK((read_at(b, 0, FLASH_ACR) & 0x707u) == 0x705u);
	CHECK(fake.reschedules == 1); /* the core learns of the new flash timing */
	CHECK(!fake.failure[0]);
	write_at(b, 0, FLASH_ACR, 0x700u | 4u); /* one too few for 168 MHz */
	CHECK(!strcmp(fake.failure, "4 flash wait states at HCLK 168000000 Hz; RM0090 table 10 "
				    "needs 5 at 2.7-3.6 V at address 0x40023c00"));
	board_free(b);

	b = new_board("", false);
	write_at(b, 0, RCC_CR, CR_HSION | CR_HSEON | CR_PLLON);
	write_at(b, 0, RCC_PLLCFGR, PLL_HSE_42MHZ);
	write_at(b, 0, RCC_CFGR, CFGR_SW_PLL); /* 42 MHz needs 1 wait state, the ACR has 0 */
	CHECK(!strcmp(fake.failure, "0 flash wait states at HCLK 42000000 Hz; RM0090 table 10 "
				    "needs 1 at 2.7-3.6 V at address 0x40023808"));
	board_free(b);
}

/* Without its HSE the board's HSE never becomes ready, nor a PLL fed by it, and the system clock
 * stays where it was when asked to switch to that PLL; a PLL fed by the HSI locks and is taken. */
static void test_without_the_hse_only_the_hsi_clocks_the_pll(void)
{
	struct board *b = new_board("", false);
	rcc_remove_hse(&b->rcc);
	write_at(b, 0, RCC_CR, CR_HSION | CR_HSEON);
	CHECK((read_at(b, 0, RCC_CR) & (CR_HSIRDY | CR_HSERDY)) == CR_HSIRDY);
	write_at(b, 0, RCC_PLLCFGR, PLL_HSE_42MHZ);
	write_at(b, 0, RCC_CR, CR_HSION | CR_HSEON | CR_PLLON);
	CHECK(!(read_at(b, 0, RCC_CR) & CR_PLLRDY));
	write_at(b, 0, FLASH_ACR, 0x700u | 1u);
	write_at(b, 0, RCC_CFGR, CFGR_SW_PLL);
	CHECK((read_at(b, 0, RCC_CFGR) & 0xcu) == 0); /* SWS: still the HSI */
	CHECK(rcc_hclk(&b->rcc) == 16000000u);

	write_at(b, 0, RCC_CR, CR_HSION);
	write_at(b, 0, RCC_PLLCFGR, PLL_HSI_24MHZ);
	write_at(b, 0, RCC_CR, CR_HSION | CR_PLLON); /* the pending switch happens once the PLL is ready */
	CHECK(read_at(b, 0, RCC_CR) & CR_PLLRDY);
	CHECK((read_at(b, 0, RCC_CFGR) & 0xcu) == CFGR_SWS_PLL);
	CHECK(rcc_hclk(&b->rcc) == 24000000u);
	CHECK(!fake.failure[0]);
	board_free(b);

	b = new_board("", false); /* with its HSE, the same requests switch to the HSE's PLL */
	write_at(b, 0, RCC_CR, CR_HSION | CR_HSEON | CR_PLLON);
	write_at(b, 0, RCC_PLLCFGR, PLL_HSE_42MHZ);
	CHECK((read_at(b, 0, RCC_CR) & (CR_HSERDY | CR_PLLRDY)) == (CR_HSERDY | CR_PLLRDY));
	write_at(b, 0, FLASH_ACR, 0x700u | 1u);
	write_at(b, 0, RCC_CFGR, CFGR_SW_PLL);
	CHECK(rcc_hclk(&b->rcc) == 42000000u);
	board_free(b);
}

int main(void)
{
	test_the_pll_clock_needs_the_flash_wait_states_of_rm0090();
	test_without_the_hse_only_the_hsi_clocks_the_pll();
	return check_summary("RCC tests");
}
