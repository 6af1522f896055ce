/* Cycle-counter reads in blocks of several shapes (counter_reads.S), each checked against the
 * Cortex-M4 TRM timing rules; run with --stats to see that the emulator answered every one in
 * place ("replayed_accesses": 0). */
#include <stdint.h>

#include "board.h"

#define READS(X)                                                                            \
	X(read_block_start, 5)     /* each read starts a block */                           \
	X(read_among_loads, 4)     /* both reads in one block with other loads and stores */ \
	X(read_ldrd, 4)            /* the counter as an LDRD's second word */               \
	X(read_ldm, 4)             /* the counter as an LDM's second word */                \
	X(read_around_it, 6)       /* an IT block between the reads (the ITE folded) */     \
	X(write_then_read, 3)      /* a write of 0 to the counter, then a read */

#define DECLARE(name, cycles) uint32_t name(void);
READS(DECLARE)

int main(void)
{
	unsigned failed = 0, passed = 0;
	board_setup();
#define RUN(name, cycles)                                                                   \
	{                                                                                   \
		uint32_t measured = name();                                                 \
		put_str(measured == (cycles) ? "PASS " #name ": " : "FAIL " #name ": ");    \
		put_u64(measured);                                                          \
		put_str(" cycles, TRM " #cycles "\n");                                      \
		measured == (cycles) ? passed++ : failed++;                                 \
	}
	READS(RUN)
	put_str(failed ? "COUNTER READS: FAILED " : "COUNTER READS: all ");
	put_u64(failed ? failed : passed);
	put_str(failed ? " failed\n" : " passed\n");
	return 0;
}
