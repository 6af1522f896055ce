/* SLH-DSA over slhdsa-c (see api.h): one adapter for the 12 parameter sets, which slhdsa-c
 * selects at run time by a parameter-set object. */
#include "api.h"

#include <randombytes.h>
#include <slh_dsa.h>

/* slhdsa-c's parameter set object, e.g. slh_dsa_sha2_128f. */
#define PARAMETER_SET                                                                              \
  PQS_SLHDSA_EXPAND_PASTE(PQS_SLHDSA_EXPAND_PASTE(slh_dsa_, PQSCOPE_SLHDSA_HASH),                \
                          PQS_SLHDSA_EXPAND_PASTE(_, PQSCOPE_SLHDSA_SET))

/* Pure SLH-DSA signs with a context string; the harness's API has none, so it is empty. */
#define NO_CONTEXT NULL, 0

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk)
{
  /* slhdsa-c draws SK.seed || SK.prf || PK.seed from the harness's randomness in one call. */
  return slh_keygen(sk, pk, randombytes, &PARAMETER_SET);
}

int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk)
{
#ifdef PQSCOPE_SLHDSA_DETERMINISTIC
  const uint8_t *opt_rand = NULL; /* slhdsa-c then signs with opt_rand = PK.seed */
#else
  uint8_t addrnd[PQS_SLHDSA_N];
  randombytes(addrnd, sizeof addrnd);
  const uint8_t *opt_rand = addrnd;
#endif
  *siglen = slh_sign(sig, m, mlen, NO_CONTEXT, sk, opt_rand, &PARAMETER_SET);
  return *siglen == CRYPTO_BYTES ? 0 : -1;
}

int crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                       const uint8_t *pk)
{
  return slh_verify(m, mlen, sig, siglen, NO_CONTEXT, pk, &PARAMETER_SET) == 1 ? 0 : -1;
}
