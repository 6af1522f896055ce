#define _GNU_SOURCE
#include "uart.h"

#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

int uart_open(struct uart_host *u, enum uart_mode mode, const char *pty_link)
{
	memset(u, 0, sizeof *u);
	u->pty_slave_fd = -1;
	if (mode == UART_STDIO) {
		u->in_fd = STDIN_FILENO;
		u->out_fd = STDOUT_FILENO;
		return 0;
	}
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
		fprintf(stderr, "vboard: error: cannot open a pseudo-terminal: %s\n", strerror(errno));
		return -1;
	}
	const char *slave = ptsname(master);
	u->pty_slave_fd = slave ? open(slave, O_RDWR | O_NOCTTY) : -1;
	if (u->pty_slave_fd < 0) {
		fprintf(stderr, "vboard: error: cannot open the pty slave: %s\n", strerror(errno));
		return -1;
	}
	/* Raw 8-bit bytes both ways, like the wire behind a USB-TTL adapter. */
	struct termios t;
	tcgetattr(u->pty_slave_fd, &t);
	cfmakeraw(&t);
	tcsetattr(u->pty_slave_fd, TCSANOW, &t);
	u->in_fd = u->out_fd = master;
	if (pty_link && *pty_link) {
		unlink(pty_link);
		if (symlink(slave, pty_link) != 0) {
			fprintf(stderr, "vboard: error: cannot create the link %s: %s\n", pty_link,
				strerror(errno));
			return -1;
		}
		snprintf(u->link, sizeof u->link, "%s", pty_link);
	}
	fprintf(stderr, "vboard: uart %s\n", slave);
	return 0;
}

void uart_close(struct uart_host *u)
{
	uart_flush(u);
	if (u->link[0])
		unlink(u->link);
	if (u->pty_slave_fd >= 0) {
		close(u->pty_slave_fd);
		close(u->in_fd);
	}
}

void uart_flush(struct uart_host *u)
{
	size_t done = 0;
	while (done < u->tx_len) {
		ssize_t n = write(u->out_fd, u->tx + done, u->tx_len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;   /* reader gone: the bytes are lost, like a disconnected wire */
		done += (size_t)n;
		u->tx_total += (uint64_t)n;
	}
	u->tx_len = 0;
}

void uart_put(struct uart_host *u, uint8_t byte)
{
	u->tx[u->tx_len++] = byte;
	/* newline ends a text line, 0x00 ends a protocol frame */
	if (byte == '\n' || byte == 0 || u->tx_len == sizeof u->tx)
		uart_flush(u);
}

enum uart_wait uart_wait_input(struct uart_host *u, volatile int *interrupted)
{
	uart_flush(u);
	if (u->eof)
		return UART_WAIT_EOF;
	/* Lets a host tell a lost answer from a slow one without a clock: the firmware waits, has
	 * consumed all input and all its output is written, so nothing more comes until the host
	 * writes. Only on change, as the firmware may poll an empty receiver many times. */
	if (!u->idle_reported || u->idle_rx != u->rx_total || u->idle_tx != u->tx_total) {
		u->idle_reported = true;
		u->idle_rx = u->rx_total;
		u->idle_tx = u->tx_total;
		fprintf(stderr, "vboard: idle rx=%llu tx=%llu\n", (unsigned long long)u->rx_total,
			(unsigned long long)u->tx_total);
		fflush(stderr);
	}
	for (;;) {
		if (*interrupted)
			return UART_WAIT_INTERRUPTED;
		struct pollfd p = {.fd = u->in_fd, .events = POLLIN};
		double waited_from = monotonic_seconds();
		int ready = poll(&p, 1, -1);
		u->host_wait_seconds += monotonic_seconds() - waited_from;
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			return UART_WAIT_EOF;
		}
		ssize_t n = read(u->in_fd, u->rx, sizeof u->rx);
		if (n > 0) {
			u->rx_total += (uint64_t)n;
			u->rx_pos = 0;
			u->rx_len = (size_t)n;
			return UART_WAIT_DATA;
		}
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		u->eof = true;
		return UART_WAIT_EOF;
	}
}

void uart_hold(struct uart_host *u, volatile int *interrupted)
{
	uart_flush(u);
	/* Signals stay blocked except inside ppoll, so one arriving after the check is not lost. */
	sigset_t stop, waiting;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &waiting);
	bool reading = true;
	while (!*interrupted) {
		struct pollfd p = {.fd = reading ? u->in_fd : -1, .events = POLLIN};
		if (ppoll(&p, 1, NULL, &waiting) > 0 && read(u->in_fd, u->rx, sizeof u->rx) <= 0)
			reading = false; /* input to a halted board is dropped; a broken input is not polled */
	}
	sigprocmask(SIG_SETMASK, &waiting, NULL);
}
