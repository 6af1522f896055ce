/* The test images' print helpers, over the board's put_char. */
#include "board.h"

void put_str(const char *s)
{
	while (*s)
		put_char(*s++);
}

void put_u64(uint64_t v)
{
	char buf[21];
	int i = 20;
	buf[i] = 0;
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_str(&buf[i]);
}

void put_i32(int32_t v)
{
	if (v < 0) {
		put_char('-');
		put_u64((uint64_t)(-(int64_t)v));
	} else {
		put_u64((uint64_t)v);
	}
}
