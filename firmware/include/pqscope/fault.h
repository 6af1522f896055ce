/* The text of a fault report: "<kind> at pc=0x<8 hex digits>" (no printf on the device). */
#ifndef PQSCOPE_FAULT_H
#define PQSCOPE_FAULT_H

#include <stddef.h>
#include <stdint.h>

#define PQS_FAULT_MESSAGE_BYTES 48

/* Writes the NUL-terminated message into out (PQS_FAULT_MESSAGE_BYTES); kind is truncated to fit. */
void pqs_fault_message(char out[PQS_FAULT_MESSAGE_BYTES], const char *kind, uint32_t pc);

#endif
