/* Fault reports: the one call a board makes upward, from its fault handlers to whatever owns the
 * image (the harness, or a test image's support code), and the report's text. */
#ifndef PQSCOPE_FAULT_H
#define PQSCOPE_FAULT_H

#include <stddef.h>
#include <stdint.h>

/* Reports a fault (kind, e.g. "HardFault", and the faulting instruction's address from the
 * exception frame) and stops: the harness sends it to the host as an ERROR record, a test image
 * prints it. Never returns. Called by the board; not part of hal.h, which lists what a board
 * provides. */
void pqs_fault(const char *kind, uint32_t pc) __attribute__((noreturn));

#define PQS_FAULT_MESSAGE_BYTES 48

/* The report's text, "<kind> at pc=0x<8 hex digits>" (no printf on the device): writes the
 * NUL-terminated message into out (PQS_FAULT_MESSAGE_BYTES); kind is truncated to fit. */
void pqs_fault_message(char out[PQS_FAULT_MESSAGE_BYTES], const char *kind, uint32_t pc);

#endif
