/* The adapter between the harness and one implementation, compiled with that implementation's
 * api.h. The catalogue row chooses, through compile definitions:
 *   PQSCOPE_NAMESPACE            prefix of the API names and CRYPTO_* macros (empty for pqm4)
 *   PQSCOPE_API_SIGNED_MESSAGE   the implementation only offers crypto_sign/crypto_sign_open */
#include <pqscope/hal.h>
#include <pqscope/scheme.h>

#include <string.h>

#include "api.h"

#ifndef PQSCOPE_NAMESPACE
#define PQSCOPE_NAMESPACE
#endif
#define PQS_PASTE(prefix, name) prefix##name
#define PQS_EXPAND_PASTE(prefix, name) PQS_PASTE(prefix, name)
#define API(name) PQS_EXPAND_PASTE(PQSCOPE_NAMESPACE, name)

#define KEY_PAIR_BYTES (API(CRYPTO_PUBLICKEYBYTES) + API(CRYPTO_SECRETKEYBYTES))
#define FITTING_SLOTS (PQS_KEY_POOL_BYTES / KEY_PAIR_BYTES)
#define KEY_SLOTS (FITTING_SLOTS < 2 ? 2 : FITTING_SLOTS > 255 ? 255 : FITTING_SLOTS)
static uint8_t key_pool[KEY_SLOTS * KEY_PAIR_BYTES] PQS_BULK_DATA;

/* Functions, not the api.h names directly: some implementations define those as macros. */
static int keypair(uint8_t *pk, uint8_t *sk)
{
  return API(crypto_sign_keypair)(pk, sk);
}

#ifndef PQSCOPE_API_SIGNED_MESSAGE
static uint8_t signature[API(CRYPTO_BYTES)];

static int sign(uint8_t *sig, size_t *sig_len, const uint8_t *msg, size_t msg_len, const uint8_t *sk)
{
  return API(crypto_sign_signature)(sig, sig_len, msg, msg_len, sk);
}

static int verify(const uint8_t *sig, size_t sig_len, const uint8_t *msg, size_t msg_len,
                  const uint8_t *pk)
{
  return API(crypto_sign_verify)(sig, sig_len, msg, msg_len, pk);
}
#else
/* The "signature" the harness handles is the whole signed message, whose layout is the
 * implementation's own; verification opens it and compares the recovered message, so a flipped
 * bit anywhere in it must be rejected. */
static uint8_t signature[API(CRYPTO_BYTES) + PQS_MAX_MSG_BYTES];
static uint8_t opened[API(CRYPTO_BYTES) + PQS_MAX_MSG_BYTES];

static int sign(uint8_t *sig, size_t *sig_len, const uint8_t *msg, size_t msg_len, const uint8_t *sk)
{
  return API(crypto_sign)(sig, sig_len, msg, msg_len, sk);
}

static int verify(const uint8_t *sig, size_t sig_len, const uint8_t *msg, size_t msg_len,
                  const uint8_t *pk)
{
  size_t opened_len;
  if (API(crypto_sign_open)(opened, &opened_len, sig, sig_len, pk) != 0) {
    return -1;
  }
  return opened_len == msg_len && memcmp(opened, msg, msg_len) == 0 ? 0 : -1;
}
#endif

const struct pqs_scheme pqs_scheme = {
  .name = PQSCOPE_SCHEME,
  .impl = PQSCOPE_IMPL,
  .pk_bytes = API(CRYPTO_PUBLICKEYBYTES),
  .sk_bytes = API(CRYPTO_SECRETKEYBYTES),
  .sig_bytes = API(CRYPTO_BYTES),
  .key_pool = key_pool,
  .slot_bytes = KEY_PAIR_BYTES,
  .key_slots = (uint8_t)KEY_SLOTS, /* clamped above; clang also checks the branches not taken */
  .pk = key_pool,
  .sk = key_pool + API(CRYPTO_PUBLICKEYBYTES),
  .sig = signature,
  .keypair = keypair,
  .sign = sign,
  .verify = verify,
};
