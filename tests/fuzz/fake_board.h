/* A board on the host for the command fuzzer (fake_board.c): the harness's UART output goes to a
 * buffer, its cycle counter is a deterministic count, its stack is a static array. */
#ifndef PQSCOPE_FAKE_BOARD_H
#define PQSCOPE_FAKE_BOARD_H

#include <stddef.h>
#include <stdint.h>

#define FAKE_BOARD_STACK_BYTES (32 * 1024)
#define FAKE_BOARD_OUTPUT_BYTES 4096

/* The harness's stack (run it there, e.g. with makecontext): hal.h's __pqscope_stack_limit is its
 * lowest byte. */
extern uint8_t __pqscope_stack_limit[FAKE_BOARD_STACK_BYTES];

/* What the harness sent since the last fake_board_reset(); more than FAKE_BOARD_OUTPUT_BYTES
 * aborts. */
extern uint8_t fake_board_output[FAKE_BOARD_OUTPUT_BYTES];
extern size_t fake_board_output_len;

/* Empties the output and restarts the cycle counter. */
void fake_board_reset(void);

#endif
