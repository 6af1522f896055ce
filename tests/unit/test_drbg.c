/* DRBG: the ChaCha20 block function against RFC 8439, and the generator's replay properties. */
#include <pqscope/drbg.h>
#include <string.h>
#include <unity.h>

#include "test_support.h"

void setUp(void) {}
void tearDown(void) {}

static void test_block_function_matches_rfc8439_section_2_3_2(void)
{
  uint32_t key[8];
  for (int i = 0; i < 8; i++) {
    key[i] = (uint32_t)(4 * i) | (uint32_t)(4 * i + 1) << 8 | (uint32_t)(4 * i + 2) << 16 |
             (uint32_t)(4 * i + 3) << 24;
  }
  const uint32_t counter_nonce[4] = {1, 0x09000000, 0x4a000000, 0};
  const uint8_t expected[64] = {
    0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20, 0x71, 0xc4,
    0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22, 0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e,
    0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa, 0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2,
    0xb5, 0x12, 0x9c, 0xd1, 0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e};
  uint8_t out[64];
  pqs_chacha20_block(key, counter_nonce, out);
  TEST_ASSERT_EQUAL_HEX8_ARRAY(expected, out, 64);
}

static void seed_with(struct pqs_drbg *drbg, uint8_t first_byte)
{
  uint8_t seed[PQS_DRBG_SEED_BYTES] = {0};
  seed[0] = first_byte;
  pqs_drbg_seed(drbg, seed);
}

static void test_same_seed_replays_the_same_stream(void)
{
  struct pqs_drbg a, b;
  uint8_t out_a[200], out_b[200];
  seed_with(&a, 7);
  seed_with(&b, 7);
  pqs_drbg_generate(&a, out_a, sizeof out_a);
  pqs_drbg_generate(&b, out_b, sizeof out_b);
  TEST_ASSERT_EQUAL_HEX8_ARRAY(out_a, out_b, sizeof out_a);
}

static void test_stream_does_not_depend_on_request_sizes(void)
{
  struct pqs_drbg whole, pieces;
  uint8_t out_whole[300], out_pieces[300];
  seed_with(&whole, 1);
  seed_with(&pieces, 1);
  pqs_drbg_generate(&whole, out_whole, sizeof out_whole);
  size_t sizes[] = {1, 63, 64, 65, 7, 100};
  size_t pos = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    pqs_drbg_generate(&pieces, out_pieces + pos, sizes[i]);
    pos += sizes[i];
  }
  TEST_ASSERT_EQUAL(sizeof out_pieces, pos);
  TEST_ASSERT_EQUAL_HEX8_ARRAY(out_whole, out_pieces, sizeof out_whole);
}

static void test_stream_is_the_keystream_with_a_64_bit_block_counter(void)
{
  struct pqs_drbg drbg;
  uint8_t seed[PQS_DRBG_SEED_BYTES], out[128], block[64];
  for (int i = 0; i < PQS_DRBG_SEED_BYTES; i++) {
    seed[i] = (uint8_t)(0xA0 + i);
  }
  pqs_drbg_seed(&drbg, seed);
  pqs_drbg_generate(&drbg, out, sizeof out);
  const uint32_t second_block[4] = {1, 0, 0, 0};
  pqs_chacha20_block(drbg.key, second_block, block);
  TEST_ASSERT_EQUAL_HEX8_ARRAY(block, out + 64, 64);
}

static void test_different_seeds_give_different_streams(void)
{
  struct pqs_drbg a, b;
  uint8_t out_a[32], out_b[32];
  seed_with(&a, 1);
  seed_with(&b, 2);
  pqs_drbg_generate(&a, out_a, sizeof out_a);
  pqs_drbg_generate(&b, out_b, sizeof out_b);
  TEST_ASSERT_NOT_EQUAL(0, memcmp(out_a, out_b, sizeof out_a));
}

int main(void)
{
  pqs_test_setup();
  UNITY_BEGIN();
  RUN_TEST(test_block_function_matches_rfc8439_section_2_3_2);
  RUN_TEST(test_same_seed_replays_the_same_stream);
  RUN_TEST(test_stream_does_not_depend_on_request_sizes);
  RUN_TEST(test_stream_is_the_keystream_with_a_64_bit_block_counter);
  RUN_TEST(test_different_seeds_give_different_streams);
  return pqs_test_finish(UNITY_END());
}
