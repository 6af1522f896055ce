/* A sample's transcript digest (PROTOCOL.md, DIGEST): SHA3-256 of pk || sk || msg || sig as the
 * linked implementation left them. The device and the host-built transcript program compute it
 * alike, so one compares implementations by their outputs, not by their speed. */
#ifndef PQSCOPE_TRANSCRIPT_H
#define PQSCOPE_TRANSCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include <pqscope/sha3.h>

void pqs_transcript_digest(const uint8_t *msg, size_t msg_len, size_t sig_len,
                           uint8_t out[PQS_SHA3_256_BYTES]);

#endif
