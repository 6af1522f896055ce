/* ECDSA P-256 over Mbed TLS: the message is hashed with SHA-256 inside the signing and verifying
 * operations, as a signature API over messages must. */
#include "api.h"

#include <mbedtls/ecdsa.h>
#include <mbedtls/sha256.h>

#include "mbedtls_support.h"

#define SCALAR_BYTES 32

int crypto_sign_keypair(uint8_t *pk, uint8_t *sk)
{
  pqs_mbedtls_setup();
  mbedtls_ecp_group group;
  mbedtls_mpi d;
  mbedtls_ecp_point q;
  mbedtls_ecp_group_init(&group);
  mbedtls_mpi_init(&d);
  mbedtls_ecp_point_init(&q);
  size_t pk_len;
  int ret = mbedtls_ecp_group_load(&group, MBEDTLS_ECP_DP_SECP256R1);
  if (ret == 0) {
    ret = mbedtls_ecp_gen_keypair(&group, &d, &q, pqs_mbedtls_random, NULL);
  }
  if (ret == 0) {
    ret = mbedtls_ecp_point_write_binary(&group, &q, MBEDTLS_ECP_PF_UNCOMPRESSED, &pk_len, pk,
                                         CRYPTO_PUBLICKEYBYTES);
  }
  if (ret == 0) {
    ret = mbedtls_mpi_write_binary(&d, sk, CRYPTO_SECRETKEYBYTES);
  }
  mbedtls_ecp_point_free(&q);
  mbedtls_mpi_free(&d);
  mbedtls_ecp_group_free(&group);
  return ret;
}

int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen,
                          const uint8_t *sk)
{
  pqs_mbedtls_setup();
  uint8_t hash[32];
  mbedtls_ecp_group group;
  mbedtls_mpi d, r, s;
  mbedtls_ecp_group_init(&group);
  mbedtls_mpi_init(&d);
  mbedtls_mpi_init(&r);
  mbedtls_mpi_init(&s);
  int ret = mbedtls_ecp_group_load(&group, MBEDTLS_ECP_DP_SECP256R1);
  if (ret == 0) {
    ret = mbedtls_mpi_read_binary(&d, sk, CRYPTO_SECRETKEYBYTES);
  }
  if (ret == 0) {
    ret = mbedtls_sha256(m, mlen, hash, 0);
  }
  if (ret == 0) {
    ret = mbedtls_ecdsa_sign(&group, &r, &s, &d, hash, sizeof hash, pqs_mbedtls_random, NULL);
  }
  if (ret == 0) {
    ret = mbedtls_mpi_write_binary(&r, sig, SCALAR_BYTES);
  }
  if (ret == 0) {
    ret = mbedtls_mpi_write_binary(&s, sig + SCALAR_BYTES, SCALAR_BYTES);
  }
  *siglen = CRYPTO_BYTES;
  mbedtls_mpi_free(&s);
  mbedtls_mpi_free(&r);
  mbedtls_mpi_free(&d);
  mbedtls_ecp_group_free(&group);
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
  mbedtls_ecp_group group;
  mbedtls_ecp_point q;
  mbedtls_mpi r, s;
  mbedtls_ecp_group_init(&group);
  mbedtls_ecp_point_init(&q);
  mbedtls_mpi_init(&r);
  mbedtls_mpi_init(&s);
  int ret = mbedtls_ecp_group_load(&group, MBEDTLS_ECP_DP_SECP256R1);
  if (ret == 0) {
    ret = mbedtls_ecp_point_read_binary(&group, &q, pk, CRYPTO_PUBLICKEYBYTES);
  }
  if (ret == 0) {
    ret = mbedtls_ecp_check_pubkey(&group, &q);
  }
  if (ret == 0) {
    ret = mbedtls_mpi_read_binary(&r, sig, SCALAR_BYTES);
  }
  if (ret == 0) {
    ret = mbedtls_mpi_read_binary(&s, sig + SCALAR_BYTES, SCALAR_BYTES);
  }
  if (ret == 0) {
    ret = mbedtls_sha256(m, mlen, hash, 0);
  }
  if (ret == 0) {
    ret = mbedtls_ecdsa_verify(&group, hash, sizeof hash, &q, &r, &s);
  }
  mbedtls_mpi_free(&s);
  mbedtls_mpi_free(&r);
  mbedtls_ecp_point_free(&q);
  mbedtls_ecp_group_free(&group);
  return ret == 0 ? 0 : -1;
}
