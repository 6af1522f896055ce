/* libFuzzer target: the device's frame receiver (pqs_receiver_push) on arbitrary bytes. Every frame
 * it accepts must lie inside its buffer, fit the protocol's limits and encode back to a frame
 * the receiver accepts again, identically. */
#include <pqscope/frame.h>

#include <stdlib.h>
#include <string.h>

static void check_round_trip(const struct pqs_frame *frame)
{
  static uint8_t wire[PQS_MAX_WIRE];
  static uint8_t payload[PQS_MAX_PAYLOAD];
  if (frame->payload_len > PQS_MAX_PAYLOAD) {
    abort();
  }
  memcpy(payload, frame->payload, frame->payload_len);
  size_t n = pqs_frame_encode(frame->type, frame->seq, payload, frame->payload_len, wire);
  if (n == 0 || n > PQS_MAX_WIRE) {
    abort();
  }
  struct pqs_receiver rx;
  struct pqs_frame again;
  pqs_receiver_init(&rx);
  for (size_t i = 0; i + 1 < n; i++) {
    if (wire[i] == 0 || pqs_receiver_push(&rx, wire[i], &again) != PQS_RX_NONE) {
      abort();
    }
  }
  if (pqs_receiver_push(&rx, wire[n - 1], &again) != PQS_RX_FRAME || again.type != frame->type ||
      again.seq != frame->seq || again.payload_len != frame->payload_len ||
      memcmp(again.payload, payload, frame->payload_len) != 0) {
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static struct pqs_receiver rx;
  pqs_receiver_init(&rx);
  for (size_t i = 0; i < size; i++) {
    struct pqs_frame frame;
    if (pqs_receiver_push(&rx, data[i], &frame) == PQS_RX_FRAME) {
      const uint8_t *end = frame.payload + frame.payload_len;
      if (frame.payload < rx.buf || end > rx.buf + sizeof rx.buf) {
        abort();
      }
      if (frame.version == PQS_PROTOCOL_VERSION) {
        check_round_trip(&frame);
      }
    }
  }
  return 0;
}
