/* Framing of the serial protocol (firmware/PROTOCOL.md): COBS-encoded bodies delimited by 0x00,
 * body = version:u8 type:u8 seq:u16 payload crc32:u32. Pure functions: tested on the host. */
#ifndef PQSCOPE_FRAME_H
#define PQSCOPE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PQS_PROTOCOL_VERSION 6
#define PQS_HEADER_BYTES 4
#define PQS_CRC_BYTES 4
#define PQS_MAX_BODY 512
#define PQS_MAX_PAYLOAD (PQS_MAX_BODY - PQS_HEADER_BYTES - PQS_CRC_BYTES)
/* COBS adds one byte per started 254-byte run, plus the delimiter. */
#define PQS_MAX_WIRE (PQS_MAX_BODY + PQS_MAX_BODY / 254 + 2)

uint32_t pqs_crc32(const uint8_t *data, size_t len);

/* Encodes len bytes into out (room for len + len/254 + 1 bytes); returns the encoded length.
 * The output contains no zero byte. */
size_t pqs_cobs_encode(const uint8_t *in, size_t len, uint8_t *out);

/* Decodes in place (COBS never expands on decoding); returns the decoded length, or -1 if the
 * input is not valid COBS (a zero byte, or a run that overshoots the end). */
int pqs_cobs_decode(uint8_t *buf, size_t len);

struct pqs_frame {
  uint8_t version;
  uint8_t type;
  uint16_t seq;
  const uint8_t *payload;
  size_t payload_len;
};

/* Builds the wire form (COBS body + 0x00) of one frame into wire (PQS_MAX_WIRE bytes); returns
 * its length, or 0 if the payload is longer than PQS_MAX_PAYLOAD. */
size_t pqs_frame_encode(uint8_t type, uint16_t seq, const uint8_t *payload, size_t payload_len,
                        uint8_t *wire);

enum pqs_rx_event {
  PQS_RX_NONE,      /* need more bytes */
  PQS_RX_FRAME,     /* a frame with a good CRC is ready */
  PQS_RX_BAD_FRAME, /* a frame was dropped: bad COBS, too short, too long or bad CRC */
};

/* Incremental receiver: feed it one byte at a time. */
struct pqs_receiver {
  uint8_t buf[PQS_MAX_WIRE];
  size_t len;
  bool overflow;
};

void pqs_receiver_init(struct pqs_receiver *rx);
/* On PQS_RX_FRAME, *frame points into rx->buf and stays valid until the next call. */
enum pqs_rx_event pqs_receiver_push(struct pqs_receiver *rx, uint8_t byte, struct pqs_frame *frame);

/* Little-endian payload writer and reader with bounds checks (ok turns false on overrun). */
struct pqs_writer {
  uint8_t *buf;
  size_t cap;
  size_t len;
  bool ok;
};

void pqs_writer_init(struct pqs_writer *w, uint8_t *buf, size_t cap);
void pqs_put_u8(struct pqs_writer *w, uint8_t v);
void pqs_put_u16(struct pqs_writer *w, uint16_t v);
void pqs_put_u32(struct pqs_writer *w, uint32_t v);
void pqs_put_u64(struct pqs_writer *w, uint64_t v);
/* A string: len:u8 + bytes, truncated to 255 bytes. */
void pqs_put_str(struct pqs_writer *w, const char *s);

struct pqs_reader {
  const uint8_t *buf;
  size_t len;
  size_t pos;
  bool ok;
};

void pqs_reader_init(struct pqs_reader *r, const uint8_t *buf, size_t len);
uint8_t pqs_get_u8(struct pqs_reader *r);
uint16_t pqs_get_u16(struct pqs_reader *r);
uint32_t pqs_get_u32(struct pqs_reader *r);
void pqs_get_bytes(struct pqs_reader *r, uint8_t *out, size_t n);

#endif
