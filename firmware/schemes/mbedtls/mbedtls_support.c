#include "mbedtls_support.h"

#include <stdbool.h>
#include <stdint.h>

#include <mbedtls/memory_buffer_alloc.h>

#include "randombytes.h"

/* Enough for RSA-2048 key generation, the largest user; every operation frees all it takes. */
#define HEAP_BYTES (16 * 1024)

void pqs_mbedtls_setup(void)
{
  static unsigned char heap[HEAP_BYTES];
  static bool ready;
  if (!ready) {
    mbedtls_memory_buffer_alloc_init(heap, sizeof heap);
    ready = true;
  }
}

int pqs_mbedtls_random(void *unused, unsigned char *out, size_t len)
{
  (void)unused;
  return randombytes(out, len);
}
