/* Optional per-function profile (--profile): exclusive cycles per function from the blocks
 * that ran in it, and inclusive cycles and call counts from a shadow call stack.
 * Output format (JSON), designed to grow:
 *   {"format": "pqscope-vboard-profile", "version": 1, "model_cycles": N,
 *    "unattributed_cycles": N,           // blocks outside every function symbol
 *    "functions": [{"name", "addr", "size", "calls", "inclusive_cycles", "exclusive_cycles"}],
 *    "call_distributions": {},           // later: {"<function>": [cycles of each call]}
 *    "trace_hashes": []}                 // later: [{"from", "to", "hash"}] block-trace hashes
 * A call is control reaching a function's first address with a new return address in LR
 * (BL/BLX, and tail calls, which share their caller's return); it ends when control reaches
 * that return address. */
#ifndef VBOARD_PROFILE_H
#define VBOARD_PROFILE_H

#include <stdint.h>

struct machine;
struct elf_image;
struct profile;

struct profile *profile_new(const struct elf_image *elf);
int profile_attach(struct profile *p, struct machine *m);
void profile_block(struct profile *p, uint32_t addr);
void profile_exception_return(struct profile *p, uint64_t cycles);
int profile_write(const struct profile *p, const char *path, uint64_t model_cycles);
void profile_free(struct profile *p);

#endif
