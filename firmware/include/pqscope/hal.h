/* The board interface: everything the harness needs from a board, and nothing else.
 * Each board folder (boards/<name>/) implements it once; nothing in firmware/ names a register. */
#ifndef PQSCOPE_HAL_H
#define PQSCOPE_HAL_H

#include <stddef.h>
#include <stdint.h>

/* Clocks (the board's configured core clock), UART and cycle counter. Called once at boot. */
void hal_setup(void);

/* Core clock in Hz, as configured by hal_setup(). */
uint32_t hal_clock_hz(void);

/* The oscillator the core clock comes from ("HSE"), and why the board fell back to it from the
 * one it prefers ("" when it did not: "HSE did not start"). */
const char *hal_clock_source(void);
const char *hal_clock_fallback_reason(void);

/* Blocking UART byte output and input (the protocol's transport). */
void hal_putc(uint8_t byte);
uint8_t hal_getc(void);

/* Free-running 64-bit core cycle counter. Never wraps in practice (2^64 cycles). */
uint64_t hal_cycles(void);

/* Called before each timed operation: restarts the counter's periodic housekeeping (the
 * interrupt that extends a hardware counter) so that it falls at the same points of every
 * operation whatever ran before, and an operation's cycles depend on the operation alone. The
 * count may jump forward here, never back. */
void hal_cycles_restart_period(void);

/* Board name, e.g. "stm32f4discovery". */
const char *hal_board_name(void);

/* This board's own serial number (the chip's unique ID), which tells boards of a kind apart. */
const char *hal_board_serial(void);

/* Bulk data the harness keeps outside the stack's RAM if the board has a second RAM: the board's
 * linker script places this (uninitialised) section, e.g. in the STM32F4's CCM. */
#define PQS_BULK_DATA __attribute__((section(".pqscope_bulk")))

/* Lowest address the stack may grow down to (end of static RAM use); provided by the board's
 * linker script. The harness paints the stack between this and the current stack pointer. */
extern uint8_t __pqscope_stack_limit[];

#endif
