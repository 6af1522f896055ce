/* The harness's command handling (firmware/PROTOCOL.md) as two calls, so that the device's main()
 * and host-side tests (tests/fuzz) drive the same code. */
#ifndef PQSCOPE_HARNESS_H
#define PQSCOPE_HARNESS_H

#include <stdint.h>

/* Calibrates the cycle counter and the probes, empties the receiver, forgets every key slot and
 * sends the boot INFO (seq 0). Call after hal_setup(), before pqs_harness_receive_byte(). */
void pqs_harness_start(void);

/* One byte from the host; a frame it completes is answered (through hal_putc) before returning. */
void pqs_harness_receive_byte(uint8_t byte);

/* The sample_id of the RUN/KEYGEN_SLOT/SIGN_SLOT command whose operations are running (set before
 * they start). Read by the virtual board, not by code: `pqscope-vboard --interval-id-symbol
 * pqs_current_sample_id` labels each timed call with the sample it belongs to. */
extern volatile uint32_t pqs_current_sample_id;

/* The firmware's version (git describe when the build was configured), NUL-padded to a fixed
 * size: a new commit changes these bytes and nothing else in the image, and the host's code digest
 * leaves them out (pqscope.build.code_digest). */
#define PQS_BUILD_ID_BYTES 48
extern const char pqs_build_id[PQS_BUILD_ID_BYTES];

#endif
