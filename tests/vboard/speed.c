/* Emulator speed workload: ChaCha20 blocks (ALU-heavy, like the firmware's DRBG) and a
 * table-driven byte loop (load/store-heavy). Prints the cycles it took. */
#include <stdint.h>

#include "board.h"

#define ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#define QR(a, b, c, d)                                                                       \
	(a += b, d ^= a, d = ROTL(d, 16), c += d, b ^= c, b = ROTL(b, 12), a += b, d ^= a,    \
	 d = ROTL(d, 8), c += d, b ^= c, b = ROTL(b, 7))

static void chacha_block(uint32_t out[16], const uint32_t in[16])
{
	uint32_t x[16];
	for (int i = 0; i < 16; i++)
		x[i] = in[i];
	for (int r = 0; r < 10; r++) {
		QR(x[0], x[4], x[8], x[12]);
		QR(x[1], x[5], x[9], x[13]);
		QR(x[2], x[6], x[10], x[14]);
		QR(x[3], x[7], x[11], x[15]);
		QR(x[0], x[5], x[10], x[15]);
		QR(x[1], x[6], x[11], x[12]);
		QR(x[2], x[7], x[8], x[13]);
		QR(x[3], x[4], x[9], x[14]);
	}
	for (int i = 0; i < 16; i++)
		out[i] = x[i] + in[i];
}

static uint8_t table[256], buf[4096];

int main(void)
{
	board_setup();
	uint32_t state[16] = {1, 2, 3, 4}, out[16];
	uint32_t t0 = DWT_CYCCNT;
	for (int i = 0; i < 200000; i++) {
		state[12] = (uint32_t)i;
		chacha_block(out, state);
		state[13] ^= out[3];
	}
	for (int i = 0; i < 256; i++)
		table[i] = (uint8_t)(i * 7 + 3);
	uint32_t acc = 0;
	for (int round = 0; round < 500; round++)
		for (int i = 0; i < 4096; i++) {
			buf[i] = table[(uint8_t)(buf[i] + i + round)];
			acc += buf[i];
		}
	uint32_t t1 = DWT_CYCCNT;
	put_str("speed workload: ");
	put_u64(t1 - t0);
	put_str(" cycles, checksum ");
	put_u64(acc ^ state[13]);
	put_str("\n");
	return 0;
}
