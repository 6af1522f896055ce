#include <pqscope/scheme.h>
#include <pqscope/transcript.h>

void pqs_transcript_digest(const uint8_t *msg, size_t msg_len, size_t sig_len,
                           uint8_t out[PQS_SHA3_256_BYTES])
{
  struct pqs_sha3 ctx;
  pqs_sha3_256_init(&ctx);
  pqs_sha3_256_absorb(&ctx, pqs_scheme.pk, pqs_scheme.pk_bytes);
  pqs_sha3_256_absorb(&ctx, pqs_scheme.sk, pqs_scheme.sk_bytes);
  pqs_sha3_256_absorb(&ctx, msg, msg_len);
  pqs_sha3_256_absorb(&ctx, pqs_scheme.sig, sig_len);
  pqs_sha3_256_final(&ctx, out);
}
