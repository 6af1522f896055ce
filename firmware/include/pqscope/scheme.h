/* The signature implementation linked into an image, behind one uniform interface. scheme.c is
 * compiled with the implementation's own api.h (pqm4/NIST signature API). */
#ifndef PQSCOPE_SCHEME_H
#define PQSCOPE_SCHEME_H

#include <stddef.h>
#include <stdint.h>

#include <pqscope/guard.h>

/* RAM given to the key pool (in the board's bulk-data RAM); it holds at least two key pairs (a
 * fixed and a random one). */
#ifndef PQS_KEY_POOL_BYTES
#define PQS_KEY_POOL_BYTES 49152
#endif

/* Longest message a RUN may ask for (INFO.max_msg_len); signed-message adapters size their
 * buffers with it. */
#define PQS_MAX_MSG_BYTES 1024

struct pqs_scheme {
  const char *name;
  const char *impl;
  size_t pk_bytes;
  size_t sk_bytes;
  size_t sig_bytes;
  /* Key pool: key_slots key pairs, slot_bytes apart, for constant-time tests (a fixed key and
   * random keys generated outside the timed region). Slot 0 serves RUN. A slot is a guard, pk, a
   * guard, sk; the next slot's first guard (or the pool's last one) follows sk (pqscope/guard.h). */
  uint8_t *key_pool;
  size_t slot_bytes;
  uint8_t key_slots;
  uint8_t *pk; /* slot 0's key pair */
  uint8_t *sk;
  /* A signature buffer of sig_buffer_bytes (sig_bytes; more for signed-message adapters), owned by
   * the adapter, and for those the buffer crypto_sign_open writes the message into (else NULL);
   * each between guards. */
  uint8_t *sig;
  size_t sig_buffer_bytes;
  uint8_t *opened;
  size_t opened_bytes;
  int (*keypair)(uint8_t *pk, uint8_t *sk);
  int (*sign)(uint8_t *sig, size_t *sig_len, const uint8_t *msg, size_t msg_len, const uint8_t *sk);
  int (*verify)(const uint8_t *sig, size_t sig_len, const uint8_t *msg, size_t msg_len,
                const uint8_t *pk);
};

extern const struct pqs_scheme pqs_scheme;

static inline uint8_t *pqs_slot_pk(uint8_t slot)
{
  return pqs_scheme.key_pool + slot * pqs_scheme.slot_bytes + PQS_GUARD_BYTES;
}

static inline uint8_t *pqs_slot_sk(uint8_t slot)
{
  return pqs_slot_pk(slot) + pqs_scheme.pk_bytes + PQS_GUARD_BYTES;
}

#endif
