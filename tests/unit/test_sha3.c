/* SHA3-256 of the transcript digest against FIPS 202 values (Python's hashlib.sha3_256). */
#include <pqscope/sha3.h>
#include <string.h>
#include <unity.h>

#include "test_support.h"

void setUp(void) {}
void tearDown(void) {}

static void hex_to_bytes(const char *hex, uint8_t *out)
{
  for (size_t i = 0; i < PQS_SHA3_256_BYTES; i++) {
    unsigned value = 0;
    for (int j = 0; j < 2; j++) {
      char c = hex[2 * i + j];
      value = value * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    out[i] = (uint8_t)value;
  }
}

static void assert_digest(const char *expected_hex, const uint8_t *data, size_t len, size_t chunk)
{
  uint8_t expected[PQS_SHA3_256_BYTES], digest[PQS_SHA3_256_BYTES];
  struct pqs_sha3 ctx;
  hex_to_bytes(expected_hex, expected);
  pqs_sha3_256_init(&ctx);
  for (size_t done = 0; done < len; done += chunk) {
    pqs_sha3_256_absorb(&ctx, data + done, len - done < chunk ? len - done : chunk);
  }
  pqs_sha3_256_final(&ctx, digest);
  TEST_ASSERT_EQUAL_HEX8_ARRAY(expected, digest, PQS_SHA3_256_BYTES);
}

static void test_empty_and_abc(void)
{
  assert_digest("a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a", NULL, 0, 1);
  assert_digest("3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
                (const uint8_t *)"abc", 3, 3);
}

/* 1000 bytes: several 136-byte blocks, absorbed whole, byte by byte and in block-straddling runs. */
static void test_multi_block_input_in_any_chunking(void)
{
  static uint8_t data[1000];
  for (size_t i = 0; i < sizeof data; i++) {
    data[i] = (uint8_t)(i % 251);
  }
  const char *expected = "48e66a01861d0eadaacdb7a6ae7db6b9ac79242ecced4154a9fbb33c4e3cc571";
  assert_digest(expected, data, sizeof data, sizeof data);
  assert_digest(expected, data, sizeof data, 1);
  assert_digest(expected, data, sizeof data, 135);
}

int main(void)
{
  pqs_test_setup();
  UNITY_BEGIN();
  RUN_TEST(test_empty_and_abc);
  RUN_TEST(test_multi_block_input_in_any_chunking);
  return pqs_test_finish(UNITY_END());
}
