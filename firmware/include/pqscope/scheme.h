/* The signature implementation linked into an image, behind one uniform interface. scheme.c is
 * compiled with the implementation's own api.h (pqm4/NIST signature API). */
#ifndef PQSCOPE_SCHEME_H
#define PQSCOPE_SCHEME_H

#include <stddef.h>
#include <stdint.h>

/* Longest message a RUN may ask for (INFO.max_msg_len); signed-message adapters size their
 * buffers with it. */
#define PQS_MAX_MSG_BYTES 1024

struct pqs_scheme {
  const char *name;
  const char *impl;
  size_t pk_bytes;
  size_t sk_bytes;
  size_t sig_bytes;
  /* Buffers of the sizes above, owned by the adapter. */
  uint8_t *pk;
  uint8_t *sk;
  uint8_t *sig;
  int (*keypair)(uint8_t *pk, uint8_t *sk);
  int (*sign)(uint8_t *sig, size_t *sig_len, const uint8_t *msg, size_t msg_len, const uint8_t *sk);
  int (*verify)(const uint8_t *sig, size_t sig_len, const uint8_t *msg, size_t msg_len,
                const uint8_t *pk);
};

extern const struct pqs_scheme pqs_scheme;

#endif
