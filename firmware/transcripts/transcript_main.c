/* transcript <seed: 64 hex digits> <msg_len>: runs one sample as the harness does (DRBG seeded
 * with the seed, key pair, msg_len message bytes from the DRBG, signature, verification) and prints
 * its transcript digest in hex (firmware/PROTOCOL.md, DIGEST). Exit status 1 if a step failed. */
#include <pqscope/drbg.h>
#include <pqscope/scheme.h>
#include <pqscope/transcript.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t message[PQS_MAX_MSG_BYTES];

static int parse_seed(const char *hex, uint8_t seed[PQS_DRBG_SEED_BYTES])
{
  if (strlen(hex) != 2 * PQS_DRBG_SEED_BYTES) {
    return -1;
  }
  for (size_t i = 0; i < PQS_DRBG_SEED_BYTES; i++) {
    unsigned byte;
    if (sscanf(hex + 2 * i, "%2x", &byte) != 1) {
      return -1;
    }
    seed[i] = (uint8_t)byte;
  }
  return 0;
}

int main(int argc, char **argv)
{
  uint8_t seed[PQS_DRBG_SEED_BYTES];
  char *end;
  unsigned long msg_len = argc == 3 ? strtoul(argv[2], &end, 10) : 0;
  if (argc != 3 || parse_seed(argv[1], seed) != 0 || *end != '\0' || msg_len > PQS_MAX_MSG_BYTES) {
    fprintf(stderr, "usage: %s <seed: %d hex digits> <msg_len <= %d>\n", argv[0],
            2 * PQS_DRBG_SEED_BYTES, PQS_MAX_MSG_BYTES);
    return 2;
  }
  pqs_drbg_seed(&pqs_global_drbg, seed);
  size_t sig_len = 0;
  if (pqs_scheme.keypair(pqs_scheme.pk, pqs_scheme.sk) != 0) {
    fprintf(stderr, "%s/%s: key generation failed\n", pqs_scheme.name, pqs_scheme.impl);
    return 1;
  }
  pqs_drbg_generate(&pqs_global_drbg, message, msg_len);
  if (pqs_scheme.sign(pqs_scheme.sig, &sig_len, message, msg_len, pqs_scheme.sk) != 0 ||
      pqs_scheme.verify(pqs_scheme.sig, sig_len, message, msg_len, pqs_scheme.pk) != 0) {
    fprintf(stderr, "%s/%s: signing or verification failed\n", pqs_scheme.name, pqs_scheme.impl);
    return 1;
  }
  uint8_t digest[PQS_SHA3_256_BYTES];
  pqs_transcript_digest(message, msg_len, sig_len, digest);
  for (size_t i = 0; i < sizeof digest; i++) {
    printf("%02x", digest[i]);
  }
  printf("\n");
  return 0;
}
