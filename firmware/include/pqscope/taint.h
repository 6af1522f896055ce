/* Secret marks for the virtual board's exact constant-time check (pqscope-vboard --taint,
 * boards/virtual/README.md). The emulator hooks the entry of these two functions by their ELF
 * symbols: pqs_taint_secret makes the n bytes at p SECRET, pqs_taint_public turns their SECRET
 * into DECLASSIFIED (a value the scheme publishes or decides on in the open). Every instruction
 * whose timing depends on a SECRET value inside the checked function is then reported.
 *
 * On a real board they are empty calls costing a few cycles: call them outside the timed
 * region. The macros are for bring-your-own code. */
#ifndef PQSCOPE_TAINT_H
#define PQSCOPE_TAINT_H

#include <stddef.h>

void pqs_taint_secret(const void *p, size_t n);
void pqs_taint_public(const void *p, size_t n);

#define PQS_SECRET(p, n) pqs_taint_secret((p), (n))
#define PQS_DECLASSIFY(p, n) pqs_taint_public((p), (n))

#endif
