/* libFuzzer target: the harness's command handling (firmware/harness/harness.c) with the toy
 * signature (tests/toy_signature), on the host board of fake_board.c and on that board's stack, so
 * that stack painting measures as on a device.
 *
 * An input is a list of chunks: raw bytes, or a command the fuzzer encodes into a frame (so that
 * COBS and the CRC do not stop it), perhaps with another version, a corrupted byte or no
 * delimiter. Every byte goes to pqs_harness_receive_byte, and what the harness sends back must be
 * well-formed frames saying exactly what firmware/PROTOCOL.md promises for the frame that byte
 * completed (a mirror receiver tells which), given a model of which key slots hold a key (and the
 * bytes KEY_WRITE put there). Each
 * input runs twice: both runs must send the same bytes. */
#include <pqscope/drbg.h>
#include <pqscope/frame.h>
#include <pqscope/harness.h>
#include <pqscope/scheme.h>

#include "fake_board.h"

#include <sanitizer/common_interface_defs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

enum { CMD_HELLO = 0x01, CMD_RUN, CMD_KEYGEN_SLOT, CMD_SIGN_SLOT, CMD_PROBE, CMD_KEY_READ, CMD_KEY_WRITE };
enum { REC_INFO = 0x81, REC_SAMPLE, REC_DONE, REC_DIGEST, REC_PROBE_NAME, REC_KEY_BYTES, REC_ERROR = 0x8F };
enum { ERR_BAD_FRAME = 1, ERR_BAD_VERSION, ERR_UNKNOWN_COMMAND, ERR_BAD_LENGTH, ERR_BAD_ARGUMENT };
#define COMMAND_PAYLOAD_BYTES 40
#define KEY_COMMAND_BYTES 5
#define KEY_CHUNK_BYTES 480
#define MODEL_PAIR_BYTES 64 /* the toy's pk and sk */
#define MAX_RECORDS 8

#define REQUIRE(cond) ((cond) ? (void)0 : violated(#cond, __LINE__))

static void violated(const char *what, int line)
{
  fprintf(stderr, "fuzz_commands.c:%d: violated: %s\n", line, what);
  abort();
}

/* ---- The device's answers ---- */

struct record {
  uint8_t type;
  uint16_t seq;
  size_t len;
  uint8_t payload[PQS_MAX_PAYLOAD];
};
static struct record records[MAX_RECORDS];
static size_t record_count;
static uint64_t output_hash; /* FNV-1a of every byte the harness sent */

/* Decodes what the harness sent since the last call: whole frames, each one good. */
static void take_answer(void)
{
  struct pqs_receiver rx;
  pqs_receiver_init(&rx);
  record_count = 0;
  for (size_t i = 0; i < fake_board_output_len; i++) {
    uint8_t byte = fake_board_output[i];
    output_hash = (output_hash ^ byte) * 0x100000001b3u;
    struct pqs_frame frame;
    enum pqs_rx_event event = pqs_receiver_push(&rx, byte, &frame);
    REQUIRE(event == (byte == 0 ? PQS_RX_FRAME : PQS_RX_NONE));
    if (event == PQS_RX_FRAME) {
      REQUIRE(frame.version == PQS_PROTOCOL_VERSION && record_count < MAX_RECORDS);
      struct record *rec = &records[record_count++];
      rec->type = frame.type;
      rec->seq = frame.seq;
      rec->len = frame.payload_len;
      memcpy(rec->payload, frame.payload, frame.payload_len);
    }
  }
  REQUIRE(rx.len == 0); /* the last frame ended */
  fake_board_output_len = 0;
}

/* A reader on the payload of record i, which must have this type and seq. */
static struct pqs_reader record_reader(size_t i, uint8_t type, uint16_t seq)
{
  REQUIRE(i < record_count && records[i].type == type && records[i].seq == seq);
  struct pqs_reader r;
  pqs_reader_init(&r, records[i].payload, records[i].len);
  return r;
}

static void skip_string(struct pqs_reader *r)
{
  uint8_t text[255];
  pqs_get_bytes(r, text, pqs_get_u8(r));
}

static void require_end(const struct pqs_reader *r)
{
  REQUIRE(r->ok && r->pos == r->len);
}

static void expect_error(uint16_t seq, uint16_t code)
{
  REQUIRE(record_count == 1);
  struct pqs_reader r = record_reader(0, REC_ERROR, seq);
  REQUIRE(pqs_get_u16(&r) == code);
  skip_string(&r);
  require_end(&r);
}

static void expect_info(uint16_t seq)
{
  REQUIRE(record_count == 1);
  struct pqs_reader r = record_reader(0, REC_INFO, seq);
  REQUIRE(pqs_get_u8(&r) == PQS_PROTOCOL_VERSION);
  REQUIRE(pqs_get_u8(&r) == pqs_scheme.key_slots);
  REQUIRE(pqs_get_u16(&r) == PQS_MAX_MSG_BYTES);
  pqs_get_u32(&r); /* clock_hz */
  REQUIRE(pqs_get_u32(&r) == pqs_scheme.pk_bytes);
  REQUIRE(pqs_get_u32(&r) == pqs_scheme.sk_bytes);
  REQUIRE(pqs_get_u32(&r) == pqs_scheme.sig_bytes);
  uint32_t stack_budget = pqs_get_u32(&r);
  REQUIRE(stack_budget > 0 && stack_budget <= FAKE_BOARD_STACK_BYTES);
  for (int i = 0; i < 5; i++) { /* board, scheme, impl, build_id, compiler */
    skip_string(&r);
  }
  REQUIRE(pqs_get_u8(&r) == 0); /* probes: the toy image has none */
  pqs_get_u32(&r);              /* probe_self_cycles */
  pqs_get_u32(&r);              /* probe_call_cycles */
  skip_string(&r);              /* board_serial */
  skip_string(&r);              /* clock_source */
  skip_string(&r);              /* clock_fallback_reason */
  require_end(&r);
}

/* ---- The model: what the harness must answer ---- */

static uint8_t slot_has_key[256 / 8];
/* Each slot's key pair where KEY_WRITE wrote all of it since its last key generation. */
static uint8_t pair_bytes[256][MODEL_PAIR_BYTES];
static bool pair_known[256];
static uint8_t writing_slot; /* KEY_WRITE's slot and its bytes written in order from offset 0 */
static uint32_t written;

static bool has_key(uint8_t slot)
{
  return slot_has_key[slot / 8] & (1u << (slot % 8));
}

static uint32_t pair_total(void)
{
  return (uint32_t)(pqs_scheme.pk_bytes + pqs_scheme.sk_bytes);
}

/* The slot and offset that KEY_READ and KEY_WRITE begin with. */
static void key_command(const struct pqs_frame *cmd, uint8_t *slot, uint32_t *offset)
{
  struct pqs_reader r;
  pqs_reader_init(&r, cmd->payload, cmd->payload_len);
  *slot = pqs_get_u8(&r);
  *offset = pqs_get_u32(&r);
}

/* KEY_READ: an ERROR, or KEY_BYTES with the slot's bytes from the offset on (those written, where known). */
static void expect_key_read(const struct pqs_frame *cmd)
{
  if (cmd->payload_len != KEY_COMMAND_BYTES) {
    expect_error(cmd->seq, ERR_BAD_LENGTH);
    return;
  }
  uint8_t slot;
  uint32_t offset;
  key_command(cmd, &slot, &offset);
  if (slot >= pqs_scheme.key_slots || !has_key(slot) || offset > pair_total()) {
    expect_error(cmd->seq, ERR_BAD_ARGUMENT);
    return;
  }
  uint32_t n = pair_total() - offset < KEY_CHUNK_BYTES ? pair_total() - offset : KEY_CHUNK_BYTES;
  REQUIRE(record_count == 1);
  struct pqs_reader k = record_reader(0, REC_KEY_BYTES, cmd->seq);
  REQUIRE(pqs_get_u8(&k) == slot && pqs_get_u32(&k) == offset && pqs_get_u32(&k) == pair_total());
  uint8_t bytes[KEY_CHUNK_BYTES];
  pqs_get_bytes(&k, bytes, n);
  require_end(&k);
  REQUIRE(!pair_known[slot] || memcmp(bytes, pair_bytes[slot] + offset, n) == 0);
}

/* KEY_WRITE: an ERROR, or DONE once its bytes are in; the slot holds a key once the last one is. */
static void expect_key_write(const struct pqs_frame *cmd)
{
  uint32_t n = cmd->payload_len > KEY_COMMAND_BYTES ? cmd->payload_len - KEY_COMMAND_BYTES : 0;
  if (n == 0 || n > KEY_CHUNK_BYTES) {
    expect_error(cmd->seq, ERR_BAD_LENGTH);
    return;
  }
  uint8_t slot;
  uint32_t offset;
  key_command(cmd, &slot, &offset);
  if (slot >= pqs_scheme.key_slots || offset > pair_total() || n > pair_total() - offset ||
      (offset > 0 && (slot != writing_slot || offset > written))) {
    expect_error(cmd->seq, ERR_BAD_ARGUMENT);
    return;
  }
  if (offset == 0) {
    writing_slot = slot;
    slot_has_key[slot / 8] &= (uint8_t)~(1u << (slot % 8));
    pair_known[slot] = false;
  }
  memcpy(pair_bytes[slot] + offset, cmd->payload + KEY_COMMAND_BYTES, n);
  written = offset + n;
  if (written == pair_total()) {
    slot_has_key[slot / 8] |= (uint8_t)(1u << (slot % 8));
    pair_known[slot] = true;
  }
  REQUIRE(record_count == 1);
  struct pqs_reader done = record_reader(0, REC_DONE, cmd->seq);
  REQUIRE(pqs_get_u32(&done) == 0 && pqs_get_u8(&done) == 0);
  require_end(&done);
}

/* RUN, KEYGEN_SLOT or SIGN_SLOT: an ERROR, or SAMPLEs (, DIGEST) and DONE, all OK (the toy
 * never fails). */
static void expect_measurement(const struct pqs_frame *cmd)
{
  /* SIGN_SLOT with flag 1 carries its message's seed after the command's seed. */
  bool message_seed = cmd->type == CMD_SIGN_SLOT && cmd->payload_len > 1 && cmd->payload[1] == 1;
  if (cmd->payload_len != COMMAND_PAYLOAD_BYTES + (message_seed ? PQS_DRBG_SEED_BYTES : 0u)) {
    expect_error(cmd->seq, ERR_BAD_LENGTH);
    return;
  }
  struct pqs_reader r;
  pqs_reader_init(&r, cmd->payload, cmd->payload_len);
  uint8_t ops_or_slot = pqs_get_u8(&r);
  uint8_t flags = pqs_get_u8(&r);
  uint16_t msg_len = pqs_get_u16(&r);
  uint32_t sample_id = pqs_get_u32(&r);
  bool run = cmd->type == CMD_RUN;
  uint8_t slot = run ? 0 : ops_or_slot;
  uint8_t ops = run ? ops_or_slot : cmd->type == CMD_KEYGEN_SLOT ? 1u << 0 : 1u << 1;
  bool valid = msg_len <= PQS_MAX_MSG_BYTES && (run ? ops != 0 && ops < 8 && flags <= 1
                                                    : slot < pqs_scheme.key_slots && (flags == 0 || message_seed));
  if (!valid || (cmd->type == CMD_SIGN_SLOT && !has_key(slot))) {
    expect_error(cmd->seq, ERR_BAD_ARGUMENT);
    return;
  }
  if (cmd->type != CMD_SIGN_SLOT) { /* a key generation: a new key, and a write into the slot ended */
    slot_has_key[slot / 8] |= (uint8_t)(1u << (slot % 8));
    pair_known[slot] = false;
    written = slot == writing_slot ? 0 : written;
  }

  size_t i = 0;
  for (uint8_t op = 0; op < 3; op++) {
    if (ops & (1u << op)) {
      struct pqs_reader s = record_reader(i++, REC_SAMPLE, cmd->seq);
      REQUIRE(pqs_get_u32(&s) == sample_id);
      REQUIRE(pqs_get_u8(&s) == op);
      REQUIRE(pqs_get_u8(&s) == 0); /* status */
      REQUIRE(pqs_get_u8(&s) == 0); /* probes */
      REQUIRE(pqs_get_u8(&s) == 0); /* returned: the toy fails nothing */
      /* The fake counter only moves when read: nothing is left after the reads' cost. */
      REQUIRE(pqs_get_u32(&s) == 0 && pqs_get_u32(&s) == 0);
      uint32_t stack_bytes = pqs_get_u32(&s);
      REQUIRE(stack_bytes > 0 && stack_bytes <= FAKE_BOARD_STACK_BYTES);
      require_end(&s);
    }
  }
  if (run && (flags & 1)) {
    struct pqs_reader d = record_reader(i++, REC_DIGEST, cmd->seq);
    uint8_t digest[32];
    REQUIRE(pqs_get_u32(&d) == sample_id);
    pqs_get_bytes(&d, digest, sizeof digest);
    require_end(&d);
  }
  struct pqs_reader done = record_reader(i++, REC_DONE, cmd->seq);
  REQUIRE(pqs_get_u32(&done) == sample_id);
  REQUIRE(pqs_get_u8(&done) == 0);
  require_end(&done);
  REQUIRE(record_count == i);
}

static struct pqs_receiver mirror; /* sees the bytes the harness sees */

static void feed(uint8_t byte)
{
  struct pqs_frame cmd;
  enum pqs_rx_event event = pqs_receiver_push(&mirror, byte, &cmd);
  pqs_harness_receive_byte(byte);
  take_answer();
  if (event == PQS_RX_NONE) {
    REQUIRE(record_count == 0);
  } else if (event == PQS_RX_BAD_FRAME) {
    expect_error(0, ERR_BAD_FRAME);
  } else if (cmd.version != PQS_PROTOCOL_VERSION) {
    expect_error(cmd.seq, ERR_BAD_VERSION);
  } else if (cmd.type == CMD_HELLO) {
    expect_info(cmd.seq);
  } else if (cmd.type >= CMD_RUN && cmd.type <= CMD_SIGN_SLOT) {
    expect_measurement(&cmd);
  } else if (cmd.type == CMD_PROBE) {
    /* The toy image has no probes: every index is out of range. */
    expect_error(cmd.seq, cmd.payload_len == 1 ? ERR_BAD_ARGUMENT : ERR_BAD_LENGTH);
  } else if (cmd.type == CMD_KEY_READ) {
    expect_key_read(&cmd);
  } else if (cmd.type == CMD_KEY_WRITE) {
    expect_key_write(&cmd);
  } else {
    expect_error(cmd.seq, ERR_UNKNOWN_COMMAND);
  }
}

/* ---- The input ---- */

struct input {
  const uint8_t *data;
  size_t left;
};

static uint8_t take(struct input *in)
{
  if (in->left == 0) {
    return 0;
  }
  in->left--;
  return *in->data++;
}

static uint16_t take_u16(struct input *in)
{
  uint16_t low = take(in);
  return (uint16_t)(low | take(in) << 8);
}

/* A frame of any version (pqs_frame_encode only writes PQS_PROTOCOL_VERSION). */
static size_t encode(uint8_t version, uint8_t type, uint16_t seq, const uint8_t *payload,
                     size_t len, uint8_t wire[PQS_MAX_WIRE])
{
  size_t n = pqs_frame_encode(type, seq, payload, len, wire);
  if (version != PQS_PROTOCOL_VERSION) {
    uint8_t body[PQS_MAX_WIRE];
    memcpy(body, wire, n - 1);
    size_t body_len = (size_t)pqs_cobs_decode(body, n - 1);
    body[0] = version;
    uint32_t crc = pqs_crc32(body, body_len - PQS_CRC_BYTES);
    for (int i = 0; i < 4; i++) {
      body[body_len - PQS_CRC_BYTES + i] = (uint8_t)(crc >> (8 * i));
    }
    n = pqs_cobs_encode(body, body_len, wire);
    wire[n++] = 0;
  }
  return n;
}

/* (kind & 3) == 0: raw bytes (length, bytes). Otherwise a command: type, seq, payload, then as kind
 * says another version, a corrupted byte, a delimiter before it, none after it. */
static void feed_chunk(struct input *in)
{
  enum { ANY_PAYLOAD = 4, ANY_VERSION = 8, CORRUPT = 16, DELIMITER_BEFORE = 32, NO_DELIMITER = 64 };
  uint8_t kind = take(in);
  if ((kind & 3) == 0) {
    for (uint8_t n = take(in); n > 0 && in->left > 0; n--) {
      feed(take(in));
    }
    return;
  }
  static const uint8_t types[11] = {CMD_HELLO, CMD_RUN, CMD_KEYGEN_SLOT, CMD_SIGN_SLOT, CMD_RUN, CMD_KEYGEN_SLOT,
                                    CMD_SIGN_SLOT, CMD_PROBE, CMD_KEY_READ, CMD_KEY_WRITE, 0};
  uint8_t type = types[take(in) % 11];
  if (type == 0) {
    type = take(in);
  }
  uint16_t seq = take_u16(in);
  uint8_t payload[PQS_MAX_PAYLOAD];
  struct pqs_writer w;
  pqs_writer_init(&w, payload, sizeof payload);
  if (kind & ANY_PAYLOAD) {
    for (size_t len = take_u16(in) % (PQS_MAX_PAYLOAD + 1); len > 0; len--) {
      pqs_put_u8(&w, take(in));
    }
  } else if (type == CMD_PROBE) {
    pqs_put_u8(&w, take(in));
  } else if (type >= CMD_RUN && type <= CMD_SIGN_SLOT) {
    /* Well-formed, mostly valid: slots mostly 0..3 (so that KEYGEN_SLOT and SIGN_SLOT meet),
     * messages short (fast). 1 in 16: ops, slot or flags is the next byte as it is, msg_len
     * is within 8 of max_msg_len. */
    uint8_t ops_or_slot = take(in);
    pqs_put_u8(&w, ops_or_slot >= 0xF0 ? take(in) : ops_or_slot % (type == CMD_RUN ? 8 : 4));
    uint8_t flags = take(in);
    pqs_put_u8(&w, flags >= 0xF0 ? take(in) : type == CMD_RUN ? flags & 1 : 0);
    uint8_t msg_len = take(in);
    pqs_put_u16(&w, msg_len >= 0xF0 ? PQS_MAX_MSG_BYTES - 8 + (msg_len - 0xF0) : msg_len);
    pqs_put_u16(&w, take_u16(in)); /* sample_id */
    pqs_put_u16(&w, take_u16(in));
    uint8_t seed_byte = take(in);
    for (int i = 0; i < 32; i++) {
      pqs_put_u8(&w, seed_byte);
    }
  } else if (type == CMD_KEY_READ || type == CMD_KEY_WRITE) {
    /* Mostly valid: slots 0..3, the offset and KEY_WRITE's bytes within the key pair; 1 in 16 the
     * slot or the offset as the input has it. */
    uint8_t slot = take(in), offset = take(in);
    pqs_put_u8(&w, slot >= 0xF0 ? take(in) : slot % 4);
    pqs_put_u32(&w, offset >= 0xF0 ? (uint32_t)take_u16(in) << 16 | take_u16(in) : offset % (pair_total() + 1));
    for (uint8_t n = type == CMD_KEY_WRITE ? take(in) % (MODEL_PAIR_BYTES + 1) : 0; n > 0; n--) {
      pqs_put_u8(&w, take(in));
    }
  }
  uint8_t version = kind & ANY_VERSION ? take(in) : PQS_PROTOCOL_VERSION;
  uint8_t wire[PQS_MAX_WIRE];
  size_t n = encode(version, type, seq, payload, w.len, wire);
  if (kind & CORRUPT) {
    size_t at = take_u16(in) % n;
    wire[at] ^= take(in);
  }
  if (kind & DELIMITER_BEFORE) {
    feed(0);
  }
  if (kind & NO_DELIMITER) {
    n--;
  }
  for (size_t i = 0; i < n; i++) {
    feed(wire[i]);
  }
}

/* Starts the harness and feeds it the whole input; returns the hash of its output. */
static uint64_t run_pass(const uint8_t *data, size_t size)
{
  REQUIRE(pair_total() <= MODEL_PAIR_BYTES);
  fake_board_reset();
  output_hash = 0xcbf29ce484222325u;
  memset(slot_has_key, 0, sizeof slot_has_key);
  memset(pair_known, 0, sizeof pair_known);
  written = 0;
  pqs_receiver_init(&mirror);
  pqs_harness_start();
  take_answer();
  expect_info(0);
  struct input in = {data, size};
  while (in.left > 0) {
    feed_chunk(&in);
  }
  return output_hash;
}

/* ---- On the board's stack ---- */

static ucontext_t fuzzer_context, harness_context;
static const uint8_t *pass_data;
static size_t pass_size;
static uint64_t pass_hash;
static const void *fuzzer_stack;
static size_t fuzzer_stack_size;

/* The __sanitizer_*_switch_fiber calls tell ASan which stack is in use. */
static void harness_stack_main(void)
{
  __sanitizer_finish_switch_fiber(NULL, &fuzzer_stack, &fuzzer_stack_size);
  pass_hash = run_pass(pass_data, pass_size);
  __sanitizer_start_switch_fiber(NULL, fuzzer_stack, fuzzer_stack_size);
} /* returns to uc_link: fuzzer_context */

static uint64_t run_pass_on_board_stack(const uint8_t *data, size_t size)
{
  pass_data = data;
  pass_size = size;
  getcontext(&harness_context);
  harness_context.uc_stack.ss_sp = __pqscope_stack_limit;
  harness_context.uc_stack.ss_size = sizeof __pqscope_stack_limit;
  harness_context.uc_link = &fuzzer_context;
  makecontext(&harness_context, harness_stack_main, 0);
  void *fake_stack;
  __sanitizer_start_switch_fiber(&fake_stack, __pqscope_stack_limit, sizeof __pqscope_stack_limit);
  swapcontext(&fuzzer_context, &harness_context);
  __sanitizer_finish_switch_fiber(fake_stack, NULL, NULL);
  return pass_hash;
}

/* libFuzzer's timeout timer (SIGALRM, every -timeout/2 + 1 s) would run its handler on the board's
 * stack, where it can land inside a measured operation and add to its stack use: the handler gets a
 * stack of its own. (Interrupts do the same on a device.) */
static void keep_alarm_off_board_stack(void)
{
  static bool done;
  static uint8_t alternate_stack[64 * 1024];
  if (done) {
    return;
  }
  done = true;
  stack_t current;
  sigaltstack(NULL, &current);
  if (current.ss_flags & SS_DISABLE) {
    stack_t ours = {.ss_sp = alternate_stack, .ss_size = sizeof alternate_stack};
    sigaltstack(&ours, NULL);
  }
  struct sigaction action;
  sigaction(SIGALRM, NULL, &action);
  action.sa_flags |= SA_ONSTACK;
  sigaction(SIGALRM, &action, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  keep_alarm_off_board_stack();
  uint64_t first = run_pass_on_board_stack(data, size);
  REQUIRE(run_pass_on_board_stack(data, size) == first);
  return 0;
}
