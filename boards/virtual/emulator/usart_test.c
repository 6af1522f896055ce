/* USART2: input present then absent, transmission, waiting for input. */
#include "check.h"
#include "fake_core.h"

#define APB1ENR_USART2 (1u << 17)
#define USART2_SR 0x40004400u
#define USART2_DR 0x40004404u
#define USART2_CR1 0x4000440cu
#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)
#define CR1_UE (1u << 13)
#define SR_RXNE (1u << 5)
#define SR_TXE (1u << 7)

/* USART2 clocked, enabled, receiving and transmitting. */
static struct board *new_board_with_usart(const char *input, bool input_ended)
{
	struct board *b = new_board(input, input_ended);
	write_at(b, 0, RCC_BASE + RCC_APB1ENR, APB1ENR_USART2);
	write_at(b, 0, USART2_CR1, CR1_UE | CR1_RE | CR1_TE);
	return b;
}

static void test_usart_reports_input_present_then_absent(void)
{
	struct board *b = new_board_with_usart("hi", false);
	CHECK((read_at(b, 0, USART2_SR) & (SR_RXNE | SR_TXE)) == (SR_RXNE | SR_TXE));
	CHECK(read_at(b, 0, USART2_DR) == 'h');
	CHECK(read_at(b, 0, USART2_SR) & SR_RXNE);
	CHECK(read_at(b, 0, USART2_DR) == 'i');
	CHECK((read_at(b, 0, USART2_SR) & (SR_RXNE | SR_TXE)) == SR_TXE);
	CHECK(!fake.failure[0] && !fake.stopped);
	board_free(b);
}

static void test_usart_transmits_a_data_register_write(void)
{
	struct board *b = new_board_with_usart("", false);
	write_at(b, 0, USART2_DR, 'A');
	CHECK(uart.tx_len == 1 && uart.tx[0] == 'A');
	write_at(b, 0, USART2_CR1, CR1_UE | CR1_RE);
	write_at(b, 0, USART2_DR, 'B');
	CHECK(uart.tx_len == 1);
	CHECK(!strcmp(fake.failure, "USART2 transmit with the transmitter disabled (CR1=0x2004) at "
				    "address 0x40004404"));
	board_free(b);
}

static void test_waiting_for_input_after_it_ended_stops_the_run(void)
{
	struct board *b = new_board_with_usart("", true);
	for (int poll = 1; poll < 8; poll++) /* a transmit loop's status reads do not wait */
		CHECK(!(read_at(b, 0, USART2_SR) & SR_RXNE) && !fake.stopped);
	(void)read_at(b, 0, USART2_SR);
	CHECK(fake.stopped && fake.stop == DEVICE_STOP_INPUT_EOF && !fake.failure[0]);
	board_free(b);
}

static void test_waiting_for_input_with_the_receiver_off_fails(void)
{
	struct board *b = new_board_with_usart("", true);
	write_at(b, 0, USART2_CR1, CR1_UE | CR1_TE);
	for (int poll = 0; poll < 8; poll++)
		(void)read_at(b, 0, USART2_SR);
	CHECK(!strcmp(fake.failure, "firmware waits for USART2 input with the receiver disabled "
				    "(CR1=0x2008) at address 0x40004400"));
	board_free(b);
}

int main(void)
{
	test_usart_reports_input_present_then_absent();
	test_usart_transmits_a_data_register_write();
	test_waiting_for_input_after_it_ended_stops_the_run();
	test_waiting_for_input_with_the_receiver_off_fails();
	return check_summary("USART2 tests");
}
