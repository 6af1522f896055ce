/* RSA-2048 PKCS#1 v1.5 over Mbed TLS. The CRT parameters travel in the secret key and are set in
 * the context directly (the only private-field access), so that signing is the private-key
 * operation and not a recomputation of DP, DQ and QP. */
#define MBEDTLS_ALLOW_PRIVATE_ACCESS
#include "api.h"

#include <mbedtls/rsa.h>
#include <mbedtls/sha256.h>

#include "mbedtls_support.h"

#define KEY_BITS 2048
#define PUBLIC_EXPONENT 65537
#define MODULUS_BYTES 256
#define EXPONENT_BYTES 4
#define HALF_BYTES 128

/* The secret key's fields, in order; the public key is its first two. */
enum { SK_N = 0, SK_E = SK_N + MODULUS_BYTES, SK_D = SK_E + EXPONENT_BYTES, SK_P = SK_D + MODULUS_BYTES,
       SK_Q = SK_P + HALF_BYTES, SK_DP = SK_Q + HALF_BYTES, SK_DQ = SK_DP + HALF_BYTES,
       SK_QP = SK_DQ + HALF_BYTES };

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk)
{
  pqs_mbedtls_setup();
  mbedtls_rsa_context rsa;
  mbedtls_mpi dp, dq, qp;
  mbedtls_rsa_init(&rsa);
  mbedtls_mpi_init(&dp);
  mbedtls_mpi_init(&dq);
  mbedtls_mpi_init(&qp);
  int ret = mbedtls_rsa_gen_key(&rsa, pqs_mbedtls_random, NULL, KEY_BITS, PUBLIC_EXPONENT);
  if (ret == 0) {
    ret = mbedtls_rsa_export_raw(&rsa, sk + SK_N, MODULUS_BYTES, sk + SK_P, HALF_BYTES,
                                 sk + SK_Q, HALF_BYTES, sk + SK_D, MODULUS_BYTES,
                                 sk + SK_E, EXPONENT_BYTES);
  }
  if (ret == 0) {
    ret = mbedtls_rsa_export_crt(&rsa, &dp, &dq, &qp);
  }
  if (ret == 0) {
    ret = mbedtls_mpi_write_binary(&dp, sk + SK_DP, HALF_BYTES);
  }
  if (ret == 0) {
    ret = mbedtls_mpi_write_binary(&dq, sk + SK_DQ, HALF_BYTES);
  }
  if (ret == 0) {
    ret = mbedtls_mpi_write_binary(&qp, sk + SK_QP, HALF_BYTES);
  }
  for (size_t i = 0; i < CRYPTO_PUBLICKEYBYTES; i++) {
    pk[i] = sk[SK_N + i];
  }
  mbedtls_mpi_free(&qp);
  mbedtls_mpi_free(&dq);
  mbedtls_mpi_free(&dp);
  mbedtls_rsa_free(&rsa);
  return ret;
}

int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk)
{
  pqs_mbedtls_setup();
  uint8_t hash[32];
  mbedtls_rsa_context rsa;
  mbedtls_rsa_init(&rsa);
  int ret = mbedtls_rsa_import_raw(&rsa, sk + SK_N, MODULUS_BYTES, sk + SK_P, HALF_BYTES,
                                   sk + SK_Q, HALF_BYTES, sk + SK_D, MODULUS_BYTES,
                                   sk + SK_E, EXPONENT_BYTES);
  if (ret == 0) {
    ret = mbedtls_mpi_read_binary(&rsa.DP, sk + SK_DP, HALF_BYTES);
  }
  if (ret == 0) {
    ret = mbedtls_mpi_read_binary(&rsa.DQ, sk + SK_DQ, HALF_BYTES);
  }
  if (ret == 0) {
    ret = mbedtls_mpi_read_binary(&rsa.QP, sk + SK_QP, HALF_BYTES);
  }
  if (ret == 0) {
    ret = mbedtls_rsa_complete(&rsa);
  }
  if (ret == 0) {
    ret = mbedtls_sha256(m, mlen, hash, 0);
  }
  if (ret == 0) {
    ret = mbedtls_rsa_pkcs1_sign(&rsa, pqs_mbedtls_random, NULL, MBEDTLS_MD_SHA256, sizeof hash,
                                 hash, sig);
  }
  *siglen = CRYPTO_BYTES;
  mbedtls_rsa_free(&rsa);
  return ret;
}

int crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen,
                       const uint8_t *pk)
{
  if (siglen != CRYPTO_BYTES) {
    return -1;
  }
  pqs_mbedtls_setup();
  uint8_t hash[32];
  mbedtls_rsa_context rsa;
  mbedtls_rsa_init(&rsa);
  int ret = mbedtls_rsa_import_raw(&rsa, pk + SK_N, MODULUS_BYTES, NULL, 0, NULL, 0, NULL, 0,
                                   pk + SK_E, EXPONENT_BYTES);
  if (ret == 0) {
    ret = mbedtls_rsa_complete(&rsa);
  }
  if (ret == 0) {
    ret = mbedtls_sha256(m, mlen, hash, 0);
  }
  if (ret == 0) {
    ret = mbedtls_rsa_pkcs1_verify(&rsa, MBEDTLS_MD_SHA256, sizeof hash, hash, sig);
  }
  mbedtls_rsa_free(&rsa);
  return ret == 0 ? 0 : -1;
}
