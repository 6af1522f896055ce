/* A deliberately insecure toy with the NIST signed-message API, laid out as pqm4's CROSS does:
 * sm = m || tag || tail. The tag is tests/toy_signature's MAC; the tail is room a fixed-size
 * encoding leaves (CROSS 1.1's Merkle proof and seed-tree path are sized for the worst case): the
 * signer zeroes it and crypto_sign_open does not read it, so a bit flipped there is accepted (a
 * malleable encoding). Built with TOY_CHECKED_FROM=1 (the control), crypto_sign_open does not read
 * the tag's first byte either: a verification that does not check what it must. */
#ifndef TOY_SIGNED_MESSAGE_API_H
#define TOY_SIGNED_MESSAGE_API_H

#include <stddef.h>
#include <stdint.h>

#define CRYPTO_PUBLICKEYBYTES 32
#define CRYPTO_SECRETKEYBYTES 32
#define CRYPTO_BYTES 64 /* a 32-byte tag, then a 32-byte tail */
#define CRYPTO_ALGNAME "toy-mac-signed-message (insecure)"

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int crypto_sign(uint8_t *sm, size_t *smlen, const uint8_t *m, size_t mlen, const uint8_t *sk);
int crypto_sign_open(uint8_t *m, size_t *mlen, const uint8_t *sm, size_t smlen, const uint8_t *pk);

#endif
