/* The host's Keccak-f[1600] against FIPS 202's published value and across its two layouts. */
#include "permutation.h"
#include "check.h"

#include <string.h>

static uint64_t lane(const uint8_t *state, int i)
{
	uint64_t v = 0;
	memcpy(&v, state + 8 * i, 8); /* the test runs on a little-endian host, as the emulator */
	return v;
}

/* Lane i of an interleaved state, put back together bit by bit. */
static uint64_t interleaved_lane(const uint8_t *state, int i)
{
	uint32_t even, odd;
	uint64_t v = 0;
	memcpy(&even, state + 8 * i, 4);
	memcpy(&odd, state + 8 * i + 4, 4);
	for (int b = 0; b < 32; b++)
		v |= (uint64_t)(even >> b & 1) << (2 * b) | (uint64_t)(odd >> b & 1) << (2 * b + 1);
	return v;
}

int main(void)
{
	/* XKCP's KeccakF-1600-IntermediateValues.txt: the zero state after one permutation */
	uint8_t lanes[KECCAK_STATE_BYTES] = {0}, interleaved[KECCAK_STATE_BYTES] = {0};
	keccak_f1600_lanes(lanes);
	CHECK(lane(lanes, 0) == 0xf1258f7940e1dde7ull);
	CHECK(lane(lanes, 1) == 0x84d5ccf933c0478aull);
	CHECK(lane(lanes, 24) == 0xeaf1ff7b5ceca249ull);

	/* a second permutation from a state with every lane different, in both layouts */
	keccak_f1600_interleaved(interleaved);
	for (int i = 0; i < 25; i++)
		CHECK(interleaved_lane(interleaved, i) == lane(lanes, i));
	keccak_f1600_lanes(lanes);
	keccak_f1600_interleaved(interleaved);
	for (int i = 0; i < 25; i++)
		CHECK(interleaved_lane(interleaved, i) == lane(lanes, i));
	CHECK(lane(lanes, 0) == 0x2d5c954df96ecb3cull);

	return check_summary("permutation");
}
