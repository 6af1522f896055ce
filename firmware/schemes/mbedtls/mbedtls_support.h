/* What the Mbed TLS adapters share: the static heap and the random callback. */
#ifndef PQSCOPE_MBEDTLS_SUPPORT_H
#define PQSCOPE_MBEDTLS_SUPPORT_H

#include <stddef.h>

/* Gives Mbed TLS its heap (once); every adapter entry point calls it first. */
void pqs_mbedtls_setup(void);

/* Mbed TLS f_rng callback: bytes from randombytes(), i.e. the harness DRBG. */
int pqs_mbedtls_random(void *unused, unsigned char *out, size_t len);

#endif
