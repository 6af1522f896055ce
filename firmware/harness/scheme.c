#include <pqscope/scheme.h>

#include "api.h"

static uint8_t public_key[CRYPTO_PUBLICKEYBYTES];
static uint8_t secret_key[CRYPTO_SECRETKEYBYTES];
static uint8_t signature[CRYPTO_BYTES];

/* Functions, not the api.h names directly: some implementations define those as macros. */
static int keypair(uint8_t *pk, uint8_t *sk)
{
  return crypto_sign_keypair(pk, sk);
}

static int sign(uint8_t *sig, size_t *sig_len, const uint8_t *msg, size_t msg_len, const uint8_t *sk)
{
  return crypto_sign_signature(sig, sig_len, msg, msg_len, sk);
}

static int verify(const uint8_t *sig, size_t sig_len, const uint8_t *msg, size_t msg_len,
                  const uint8_t *pk)
{
  return crypto_sign_verify(sig, sig_len, msg, msg_len, pk);
}

const struct pqs_scheme pqs_scheme = {
  .name = PQSCOPE_SCHEME,
  .impl = PQSCOPE_IMPL,
  .pk_bytes = CRYPTO_PUBLICKEYBYTES,
  .sk_bytes = CRYPTO_SECRETKEYBYTES,
  .sig_bytes = CRYPTO_BYTES,
  .pk = public_key,
  .sk = secret_key,
  .sig = signature,
  .keypair = keypair,
  .sign = sign,
  .verify = verify,
};
