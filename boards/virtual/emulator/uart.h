/* Host side of the board's USART2: stdio or a pseudo-terminal. Output is buffered and flushed
 * at line/frame ends and whenever the firmware starts waiting for input. */
#ifndef VBOARD_UART_H
#define VBOARD_UART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum uart_mode { UART_STDIO, UART_PTY };

struct uart_host {
	int in_fd, out_fd;
	int pty_slave_fd;          /* kept open so the pty survives the client closing it */
	char link[4096];           /* --pty-link symlink to remove at exit, or "" */
	bool eof;
	uint8_t rx[4096];
	size_t rx_pos, rx_len;
	uint8_t tx[4096];
	size_t tx_len;
	double host_wait_seconds;  /* wall time spent blocked waiting for the host's input */
	/* Bytes read from the input and written to the output so far, and their values in the last
	 * "vboard: idle" line (see uart_wait_input). */
	uint64_t rx_total, tx_total;
	uint64_t idle_rx, idle_tx;
	bool idle_reported;
};

/* Returns 0, or -1 after printing "vboard: error: ...". */
int uart_open(struct uart_host *u, enum uart_mode mode, const char *pty_link);
void uart_close(struct uart_host *u);

void uart_put(struct uart_host *u, uint8_t byte);
void uart_flush(struct uart_host *u);

static inline bool uart_rx_ready(const struct uart_host *u) { return u->rx_pos < u->rx_len; }
static inline uint8_t uart_rx_pop(struct uart_host *u) { return u->rx[u->rx_pos++]; }

enum uart_wait { UART_WAIT_DATA, UART_WAIT_EOF, UART_WAIT_INTERRUPTED };
/* Blocks until input arrives (flushing output first). `interrupted` is polled after EINTR.
 * Before blocking, reports "vboard: idle rx=N tx=M" on stderr when the totals changed since the
 * last report: the firmware has consumed every byte received and waits for more. */
enum uart_wait uart_wait_input(struct uart_host *u, volatile int *interrupted);

/* After the firmware halted: flushes the output and keeps the UART open until `interrupted` (a
 * signal) is set, as a halted real board's stays readable, so that a host opening the pty late
 * still reads all the firmware wrote. */
void uart_hold(struct uart_host *u, volatile int *interrupted);

#endif
