/* The implementations' randomness source (PQClean/mupq randombytes.h API), fed by the harness's
 * seeded DRBG instead of a hardware RNG so that every sample can be replayed. */
#include <pqscope/drbg.h>

#include "randombytes.h"

int randombytes(uint8_t *output, size_t n)
{
  pqs_drbg_generate(&pqs_global_drbg, output, n);
  return 0;
}

/* randombytes.h renames the function PQCLEAN_randombytes; older code (pqm4's Round3 Falcon)
 * declares and calls the plain name, so it is provided too. */
#undef randombytes
int randombytes(uint8_t *output, size_t n) __attribute__((alias("PQCLEAN_randombytes")));
