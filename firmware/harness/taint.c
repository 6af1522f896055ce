/* The secret marks of pqscope/taint.h: empty on the board, hooked by the virtual board's taint
 * tracking. noinline and used keep a real call at every use, and the asm barrier, which claims
 * to read p and n and all memory, keeps the bytes written before the call. */
#include <pqscope/taint.h>

__attribute__((noinline, used)) void pqs_taint_secret(const void *p, size_t n)
{
  __asm__ volatile("" : : "r"(p), "r"(n) : "memory");
}

__attribute__((noinline, used)) void pqs_taint_public(const void *p, size_t n)
{
  __asm__ volatile("" : : "r"(p), "r"(n) : "memory");
}
