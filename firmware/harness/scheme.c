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

/* A slot: a guard, pk, a guard, sk; the pool ends with the guard after the last sk. */
#define SLOT_BYTES (API(CRYPTO_PUBLICKEYBYTES) + API(CRYPTO_SECRETKEYBYTES) + 2 * PQS_GUARD_BYTES)
#define FITTING_SLOTS ((PQS_KEY_POOL_BYTES - PQS_GUARD_BYTES) / SLOT_BYTES)
#ifdef PQSCOPE_KEY_SLOTS /* the build's: one key pair where two do not fit beside the stack (a run needs one) */
#define KEY_SLOTS PQSCOPE_KEY_SLOTS
#else
#define KEY_SLOTS (FITTING_SLOTS < 2 ? 2 : FITTING_SLOTS > 255 ? 255 : FITTING_SLOTS)
#endif
/* Named pqs_guarded_*: the virtual board watches it (pqscope/guard.h). */
uint8_t pqs_guarded_key_pool[KEY_SLOTS * SLOT_BYTES + PQS_GUARD_BYTES] PQS_BULK_DATA;

/* Functions, not the api.h names directly: some implementations define those as macros. */
static int keypair(uint8_t *pk, uint8_t *sk)
{
  return API(crypto_sign_keypair)(pk, sk);
}

#ifndef PQSCOPE_API_SIGNED_MESSAGE
PQS_GUARDED(API(CRYPTO_BYTES)) pqs_guarded_signature;

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
PQS_GUARDED(API(CRYPTO_BYTES) + PQS_MAX_MSG_BYTES) pqs_guarded_signature;
PQS_GUARDED(API(CRYPTO_BYTES) + PQS_MAX_MSG_BYTES) pqs_guarded_opened;

static int sign(uint8_t *sig, size_t *sig_len, const uint8_t *msg, size_t msg_len, const uint8_t *sk)
{
  return API(crypto_sign)(sig, sig_len, msg, msg_len, sk);
}

static int verify(const uint8_t *sig, size_t sig_len, const uint8_t *msg, size_t msg_len,
                  const uint8_t *pk)
{
  size_t opened_len;
  uint8_t *opened = pqs_guarded_opened.bytes;
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
  .key_pool = pqs_guarded_key_pool,
  .slot_bytes = SLOT_BYTES,
  .key_slots = (uint8_t)KEY_SLOTS, /* clamped above; clang also checks the branches not taken */
  .pk = pqs_guarded_key_pool + PQS_GUARD_BYTES,
  .sk = pqs_guarded_key_pool + 2 * PQS_GUARD_BYTES + API(CRYPTO_PUBLICKEYBYTES),
  .sig = pqs_guarded_signature.bytes,
  .sig_buffer_bytes = sizeof pqs_guarded_signature.bytes,
#ifdef PQSCOPE_API_SIGNED_MESSAGE
  .opened = pqs_guarded_opened.bytes,
  .opened_bytes = sizeof pqs_guarded_opened.bytes,
#endif
  .keypair = keypair,
  .sign = sign,
  .verify = verify,
};
