#include <pqscope/frame.h>

#include <string.h>

uint32_t pqs_crc32(const uint8_t *data, size_t len)
{
  /* Bitwise CRC-32/ISO-HDLC (reflected 0xEDB88320): frames are short, so no 1 KiB table. */
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < len; i++) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; bit++) {
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
  }
  return ~crc;
}

size_t pqs_cobs_encode(const uint8_t *in, size_t len, uint8_t *out)
{
  size_t code_pos = 0;
  size_t out_len = 1;
  uint8_t code = 1;
  for (size_t i = 0; i < len; i++) {
    if (in[i] != 0) {
      out[out_len++] = in[i];
      code++;
    }
    /* A full 254-byte run ends its block; the next block is only opened if bytes remain, so the
     * encoding is the canonical one. */
    if (in[i] == 0 || (code == 0xFF && i + 1 < len)) {
      out[code_pos] = code;
      code_pos = out_len++;
      code = 1;
    }
  }
  out[code_pos] = code;
  return out_len;
}

int pqs_cobs_decode(uint8_t *buf, size_t len)
{
  size_t in = 0;
  size_t out = 0;
  while (in < len) {
    uint8_t code = buf[in++];
    if (code == 0 || in + code - 1 > len) {
      return -1;
    }
    for (uint8_t i = 1; i < code; i++) {
      if (buf[in] == 0) {
        return -1;
      }
      buf[out++] = buf[in++];
    }
    if (code != 0xFF && in < len) {
      buf[out++] = 0;
    }
  }
  return (int)out;
}

size_t pqs_frame_encode(uint8_t type, uint16_t seq, const uint8_t *payload, size_t payload_len,
                        uint8_t *wire)
{
  if (payload_len > PQS_MAX_PAYLOAD) {
    return 0;
  }
  uint8_t body[PQS_MAX_BODY];
  struct pqs_writer w;
  pqs_writer_init(&w, body, sizeof body);
  pqs_put_u8(&w, PQS_PROTOCOL_VERSION);
  pqs_put_u8(&w, type);
  pqs_put_u16(&w, seq);
  memcpy(body + w.len, payload, payload_len);
  w.len += payload_len;
  pqs_put_u32(&w, pqs_crc32(body, w.len));
  size_t n = pqs_cobs_encode(body, w.len, wire);
  wire[n++] = 0;
  return n;
}

void pqs_receiver_init(struct pqs_receiver *rx)
{
  rx->len = 0;
  rx->overflow = false;
}

static enum pqs_rx_event finish_frame(struct pqs_receiver *rx, struct pqs_frame *frame)
{
  int n = pqs_cobs_decode(rx->buf, rx->len);
  if (n < PQS_HEADER_BYTES + PQS_CRC_BYTES) {
    return PQS_RX_BAD_FRAME;
  }
  size_t body_len = (size_t)n - PQS_CRC_BYTES;
  struct pqs_reader r;
  pqs_reader_init(&r, rx->buf + body_len, PQS_CRC_BYTES);
  if (pqs_get_u32(&r) != pqs_crc32(rx->buf, body_len)) {
    return PQS_RX_BAD_FRAME;
  }
  pqs_reader_init(&r, rx->buf, body_len);
  frame->version = pqs_get_u8(&r);
  frame->type = pqs_get_u8(&r);
  frame->seq = pqs_get_u16(&r);
  frame->payload = rx->buf + PQS_HEADER_BYTES;
  frame->payload_len = body_len - PQS_HEADER_BYTES;
  return PQS_RX_FRAME;
}

enum pqs_rx_event pqs_receiver_push(struct pqs_receiver *rx, uint8_t byte, struct pqs_frame *frame)
{
  if (byte != 0) {
    if (rx->len < sizeof rx->buf) {
      rx->buf[rx->len++] = byte;
    } else {
      rx->overflow = true;
    }
    return PQS_RX_NONE;
  }
  /* A delimiter: whatever was collected is one frame (empty runs between delimiters are noise). */
  enum pqs_rx_event event = PQS_RX_NONE;
  if (rx->overflow) {
    event = PQS_RX_BAD_FRAME;
  } else if (rx->len > 0) {
    event = finish_frame(rx, frame);
  }
  rx->len = 0;
  rx->overflow = false;
  return event;
}

void pqs_writer_init(struct pqs_writer *w, uint8_t *buf, size_t cap)
{
  w->buf = buf;
  w->cap = cap;
  w->len = 0;
  w->ok = true;
}

static void put_le(struct pqs_writer *w, uint64_t v, size_t n)
{
  if (!w->ok || w->cap - w->len < n) {
    w->ok = false;
    return;
  }
  for (size_t i = 0; i < n; i++) {
    w->buf[w->len++] = (uint8_t)(v >> (8 * i));
  }
}

void pqs_put_u8(struct pqs_writer *w, uint8_t v) { put_le(w, v, 1); }
void pqs_put_u16(struct pqs_writer *w, uint16_t v) { put_le(w, v, 2); }
void pqs_put_u32(struct pqs_writer *w, uint32_t v) { put_le(w, v, 4); }
void pqs_put_u64(struct pqs_writer *w, uint64_t v) { put_le(w, v, 8); }

void pqs_put_str(struct pqs_writer *w, const char *s)
{
  size_t n = strlen(s);
  if (n > 255) {
    n = 255;
  }
  pqs_put_u8(w, (uint8_t)n);
  if (!w->ok || w->cap - w->len < n) {
    w->ok = false;
    return;
  }
  memcpy(w->buf + w->len, s, n);
  w->len += n;
}

void pqs_reader_init(struct pqs_reader *r, const uint8_t *buf, size_t len)
{
  r->buf = buf;
  r->len = len;
  r->pos = 0;
  r->ok = true;
}

static uint64_t get_le(struct pqs_reader *r, size_t n)
{
  if (!r->ok || r->len - r->pos < n) {
    r->ok = false;
    return 0;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    v |= (uint64_t)r->buf[r->pos++] << (8 * i);
  }
  return v;
}

uint8_t pqs_get_u8(struct pqs_reader *r) { return (uint8_t)get_le(r, 1); }
uint16_t pqs_get_u16(struct pqs_reader *r) { return (uint16_t)get_le(r, 2); }
uint32_t pqs_get_u32(struct pqs_reader *r) { return (uint32_t)get_le(r, 4); }

void pqs_get_bytes(struct pqs_reader *r, uint8_t *out, size_t n)
{
  if (!r->ok || r->len - r->pos < n) {
    r->ok = false;
    return;
  }
  memcpy(out, r->buf + r->pos, n);
  r->pos += n;
}
