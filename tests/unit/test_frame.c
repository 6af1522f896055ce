/* Framing: CRC, COBS, frame encode/receive, corruption detection and resynchronisation. */
#include <pqscope/frame.h>
#include <string.h>
#include <unity.h>

#include "test_support.h"

void setUp(void) {}
void tearDown(void) {}

/* A small deterministic byte source for test data (xorshift32). */
static uint32_t rng_state = 0x12345678u;
static uint8_t next_byte(void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return (uint8_t)rng_state;
}

/* Feeds wire bytes; returns how many frames were accepted and how many dropped. */
static void feed(struct pqs_receiver *rx, const uint8_t *wire, size_t n, int *frames, int *bad,
                 struct pqs_frame *last)
{
  for (size_t i = 0; i < n; i++) {
    switch (pqs_receiver_push(rx, wire[i], last)) {
    case PQS_RX_FRAME: (*frames)++; break;
    case PQS_RX_BAD_FRAME: (*bad)++; break;
    case PQS_RX_NONE: break;
    }
  }
}

static void test_crc32_matches_the_standard_check_value(void)
{
  TEST_ASSERT_EQUAL_HEX32(0xCBF43926u, pqs_crc32((const uint8_t *)"123456789", 9));
}

static void test_cobs_encodes_the_reference_example(void)
{
  const uint8_t in[] = {0x11, 0x22, 0x00, 0x33};
  const uint8_t expected[] = {0x03, 0x11, 0x22, 0x02, 0x33};
  uint8_t out[8];
  TEST_ASSERT_EQUAL(sizeof expected, pqs_cobs_encode(in, sizeof in, out));
  TEST_ASSERT_EQUAL_HEX8_ARRAY(expected, out, sizeof expected);
}

static void test_cobs_round_trips_and_never_emits_zero(void)
{
  static uint8_t in[600], enc[620];
  for (size_t len = 0; len <= sizeof in; len += 37) {
    for (size_t i = 0; i < len; i++) {
      /* Mostly non-zero, so long runs (>= 254) occur, with some zeros. */
      uint8_t b = next_byte();
      in[i] = (b < 8) ? 0 : b;
    }
    size_t n = pqs_cobs_encode(in, len, enc);
    TEST_ASSERT_LESS_OR_EQUAL(len + len / 254 + 1, n);
    TEST_ASSERT_NULL(memchr(enc, 0, n));
    TEST_ASSERT_EQUAL_INT((int)len, pqs_cobs_decode(enc, n));
    if (len > 0) {
      TEST_ASSERT_EQUAL_HEX8_ARRAY(in, enc, len);
    }
  }
}

static void test_cobs_full_run_has_no_trailing_block(void)
{
  uint8_t in[254], enc[260];
  memset(in, 0xAB, sizeof in);
  TEST_ASSERT_EQUAL(255, pqs_cobs_encode(in, sizeof in, enc));
  TEST_ASSERT_EQUAL_HEX8(0xFF, enc[0]);
}

static void test_cobs_rejects_malformed_input(void)
{
  uint8_t overshoot[] = {0x05, 0x11, 0x22};
  uint8_t embedded_zero[] = {0x03, 0x11, 0x00};
  TEST_ASSERT_EQUAL_INT(-1, pqs_cobs_decode(overshoot, sizeof overshoot));
  TEST_ASSERT_EQUAL_INT(-1, pqs_cobs_decode(embedded_zero, sizeof embedded_zero));
}

static void test_frame_round_trip_through_the_receiver(void)
{
  uint8_t payload[300], wire[PQS_MAX_WIRE];
  for (size_t i = 0; i < sizeof payload; i++) {
    payload[i] = (uint8_t)i; /* includes zeros */
  }
  size_t n = pqs_frame_encode(0x82, 0xBEEF, payload, sizeof payload, wire);
  TEST_ASSERT_EQUAL_HEX8(0, wire[n - 1]);
  struct pqs_receiver rx;
  struct pqs_frame frame;
  int frames = 0, bad = 0;
  pqs_receiver_init(&rx);
  feed(&rx, wire, n, &frames, &bad, &frame);
  TEST_ASSERT_EQUAL(1, frames);
  TEST_ASSERT_EQUAL(0, bad);
  TEST_ASSERT_EQUAL(PQS_PROTOCOL_VERSION, frame.version);
  TEST_ASSERT_EQUAL_HEX8(0x82, frame.type);
  TEST_ASSERT_EQUAL_HEX16(0xBEEF, frame.seq);
  TEST_ASSERT_EQUAL(sizeof payload, frame.payload_len);
  TEST_ASSERT_EQUAL_HEX8_ARRAY(payload, frame.payload, sizeof payload);
}

static void test_every_single_bit_flip_is_rejected(void)
{
  uint8_t payload[40], wire[PQS_MAX_WIRE], corrupted[PQS_MAX_WIRE];
  for (size_t i = 0; i < sizeof payload; i++) {
    payload[i] = next_byte();
  }
  size_t n = pqs_frame_encode(0x02, 7, payload, sizeof payload, wire);
  for (size_t bit = 0; bit < (n - 1) * 8; bit++) {
    memcpy(corrupted, wire, n);
    corrupted[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    struct pqs_receiver rx;
    struct pqs_frame frame;
    int frames = 0, bad = 0;
    pqs_receiver_init(&rx);
    feed(&rx, corrupted, n, &frames, &bad, &frame);
    TEST_ASSERT_EQUAL_MESSAGE(0, frames, "a corrupted frame was accepted");
    TEST_ASSERT_GREATER_OR_EQUAL(1, bad);
  }
}

static void test_receiver_resynchronises_after_garbage_and_overflow(void)
{
  uint8_t wire[PQS_MAX_WIRE], garbage[PQS_MAX_WIRE + 50];
  const uint8_t payload[] = {1, 2, 3};
  size_t n = pqs_frame_encode(0x01, 1, payload, sizeof payload, wire);
  memset(garbage, 0x55, sizeof garbage); /* longer than any frame: overflows the buffer */
  struct pqs_receiver rx;
  struct pqs_frame frame;
  int frames = 0, bad = 0;
  pqs_receiver_init(&rx);
  const uint8_t delimiter = 0;
  /* Noise merges with the frame that follows it: that frame is dropped, the next one is not. */
  feed(&rx, garbage, sizeof garbage, &frames, &bad, &frame);
  feed(&rx, wire, n, &frames, &bad, &frame);
  TEST_ASSERT_EQUAL(1, bad);
  TEST_ASSERT_EQUAL(0, frames);
  feed(&rx, wire, n, &frames, &bad, &frame);
  TEST_ASSERT_EQUAL(1, frames);
  /* A sender that leads with a delimiter keeps noise out of its frame. */
  feed(&rx, garbage, sizeof garbage, &frames, &bad, &frame);
  feed(&rx, &delimiter, 1, &frames, &bad, &frame);
  feed(&rx, wire, n, &frames, &bad, &frame);
  TEST_ASSERT_EQUAL(2, bad);
  TEST_ASSERT_EQUAL(2, frames);
  TEST_ASSERT_EQUAL_HEX8_ARRAY(payload, frame.payload, sizeof payload);
}

static void test_oversized_payload_is_refused(void)
{
  static uint8_t payload[PQS_MAX_PAYLOAD + 1], wire[PQS_MAX_WIRE];
  TEST_ASSERT_EQUAL(0, pqs_frame_encode(0x81, 0, payload, sizeof payload, wire));
  TEST_ASSERT_NOT_EQUAL(0, pqs_frame_encode(0x81, 0, payload, PQS_MAX_PAYLOAD, wire));
}

static void test_writer_and_reader_are_little_endian_and_bounded(void)
{
  uint8_t buf[16];
  struct pqs_writer w;
  pqs_writer_init(&w, buf, sizeof buf);
  pqs_put_u16(&w, 0x1234);
  pqs_put_u64(&w, 0x0102030405060708ull);
  pqs_put_str(&w, "abc");
  TEST_ASSERT_TRUE(w.ok);
  TEST_ASSERT_EQUAL(14, w.len);
  TEST_ASSERT_EQUAL_HEX8(0x34, buf[0]);
  TEST_ASSERT_EQUAL_HEX8(0x08, buf[2]);
  TEST_ASSERT_EQUAL_HEX8(3, buf[10]);
  pqs_put_u32(&w, 0); /* 14 + 4 > 16 */
  TEST_ASSERT_FALSE(w.ok);

  struct pqs_reader r;
  pqs_reader_init(&r, buf, 3);
  TEST_ASSERT_EQUAL_HEX16(0x1234, pqs_get_u16(&r));
  TEST_ASSERT_TRUE(r.ok);
  pqs_get_u16(&r);
  TEST_ASSERT_FALSE(r.ok);
}

int main(void)
{
  pqs_test_setup();
  UNITY_BEGIN();
  RUN_TEST(test_crc32_matches_the_standard_check_value);
  RUN_TEST(test_cobs_encodes_the_reference_example);
  RUN_TEST(test_cobs_round_trips_and_never_emits_zero);
  RUN_TEST(test_cobs_full_run_has_no_trailing_block);
  RUN_TEST(test_cobs_rejects_malformed_input);
  RUN_TEST(test_frame_round_trip_through_the_receiver);
  RUN_TEST(test_every_single_bit_flip_is_rejected);
  RUN_TEST(test_receiver_resynchronises_after_garbage_and_overflow);
  RUN_TEST(test_oversized_payload_is_refused);
  RUN_TEST(test_writer_and_reader_are_little_endian_and_bounded);
  return pqs_test_finish(UNITY_END());
}
