/* An implementation that writes outside the buffers the harness hands it, chosen by the length of
 * the message it signs, to test that the harness and the virtual board catch each such write
 * (firmware/include/pqscope/guard.h; tests/virtual-board/test_guards_virtual.py). Otherwise the
 * toy MAC of tests/toy_signature: the public key is the secret key. */
#ifndef GUARD_OVERFLOW_API_H
#define GUARD_OVERFLOW_API_H

#include <stddef.h>
#include <stdint.h>

#define CRYPTO_PUBLICKEYBYTES 32
#define CRYPTO_SECRETKEYBYTES 32
#define CRYPTO_BYTES 32
#define CRYPTO_ALGNAME "guard-overflow (insecure, writes out of bounds on purpose)"

/* Message lengths that make it misbehave; any other signs and verifies as the toy does. */
#define PAST_SIGNATURE_FIRST 1   /* 1..64: signing flips byte CRYPTO_BYTES + mlen - 1 of the signature */
#define PAST_SIGNATURE_LAST 64
#define PAST_PUBLIC_KEY_FIRST 101 /* 101..164: verifying flips byte CRYPTO_PUBLICKEYBYTES + mlen - 101 of pk */
#define PAST_PUBLIC_KEY_LAST 164
#define INTO_COUNTERS 200        /* signing flips a byte of the harness's SysTick wrap count, through sig */
#define SIGNING_FAILS 300        /* signing returns -1 */
#define STACK_OVERFLOWS 400      /* signing's stack grows 32 bytes past its end, into .bss */

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk);
int crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                       const uint8_t *pk);

#endif
