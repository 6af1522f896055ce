/* The measurement harness: answers the host's commands (firmware/PROTOCOL.md) by running the
 * linked signature implementation and reporting cycles and stack use per operation. The board's
 * main() (main.c) feeds it the UART's bytes. */
#include <pqscope/drbg.h>
#include <pqscope/fault.h>
#include <pqscope/frame.h>
#include <pqscope/guard.h>
#include <pqscope/hal.h>
#include <pqscope/harness.h>
#include <pqscope/probe.h>
#include <pqscope/scheme.h>
#include <pqscope/stackmeter.h>
#include <pqscope/taint.h>
#include <pqscope/transcript.h>

#include <stdbool.h>
#include <string.h>

enum {
  CMD_HELLO = 0x01, CMD_RUN = 0x02, CMD_KEYGEN_SLOT = 0x03, CMD_SIGN_SLOT = 0x04, CMD_PROBE = 0x05,
  CMD_KEY_READ = 0x06, CMD_KEY_WRITE = 0x07
};
enum {
  REC_INFO = 0x81, REC_SAMPLE = 0x82, REC_DONE = 0x83, REC_DIGEST = 0x84, REC_PROBE_NAME = 0x85,
  REC_KEY_BYTES = 0x86, REC_ERROR = 0x8F
};
enum { RUN_FLAG_DIGEST = 1u << 0 };
enum { OP_KEYGEN, OP_SIGN, OP_VERIFY, OP_COUNT };
enum { STATUS_OK, STATUS_OP_FAILED, STATUS_VALID_REJECTED, STATUS_FORGERY_ACCEPTED };
enum {
  ERR_BAD_FRAME = 1, ERR_BAD_VERSION, ERR_UNKNOWN_COMMAND, ERR_BAD_LENGTH, ERR_BAD_ARGUMENT, ERR_FAULT,
  ERR_GUARD, ERR_STACK_OVERFLOW
};

#define RUN_PAYLOAD_BYTES (1 + 1 + 2 + 4 + PQS_DRBG_SEED_BYTES)
/* KEYGEN_SLOT and SIGN_SLOT share RUN's layout, with the key slot in place of ops; SIGN_SLOT with
 * SLOT_FLAG_MESSAGE_SEED carries the seed of its message after it. */
#define SLOT_PAYLOAD_BYTES RUN_PAYLOAD_BYTES
#define SLOT_FLAG_MESSAGE_SEED 1u
/* KEY_READ and KEY_WRITE: slot:u8 offset:u32, KEY_WRITE then its bytes; KEY_BYTES answers KEY_READ
 * with slot:u8 offset:u32 total:u32 and at most KEY_CHUNK_BYTES bytes. */
#define KEY_COMMAND_BYTES 5u
#define KEY_CHUNK_BYTES 480u
/* SAMPLE: 20 bytes, then cycles:i64 calls:u32 per probe. */
#define SAMPLE_PAYLOAD_BYTES (20 + 12 * PQS_MAX_PROBES)
/* Room left unpainted below the measuring frame for the painter's own frame. */
#define PAINT_GUARD_BYTES 256

struct measurement {
  uint64_t cycles;
  uint32_t stack_bytes;
  int ret;
  bool guards_intact; /* false: the operation wrote outside its buffers, `violation` says where */
  struct pqs_guard_violation violation;
  bool stack_overflowed; /* its stack reached the lowest painted word, the end of .bss */
};

static const char *const op_names[OP_COUNT] = {"keygen", "sign", "verify"};

/* Named pqs_guarded_*: the virtual board watches it (pqscope/guard.h). The harness's counters
 * (the key slot the operations use, the lengths, the counter's calibration) are in pqs_state. */
PQS_GUARDED(PQS_MAX_MSG_BYTES) pqs_guarded_message;
static uint8_t *const message = pqs_guarded_message.bytes;
/* Written by the implementation (through its pointer): not among the harness's counters. */
static size_t signature_len;
volatile uint32_t pqs_current_sample_id;
/* KEY_WRITE's progress: the slot it writes and the bytes written in order from offset 0. */
static struct {
  uint8_t slot;
  uint32_t written;
} key_write;

static void send_record(uint8_t type, uint16_t seq, const struct pqs_writer *payload)
{
  static uint8_t wire[PQS_MAX_WIRE];
  size_t n = pqs_frame_encode(type, seq, payload->buf, payload->len, wire);
  for (size_t i = 0; i < n; i++) {
    hal_putc(wire[i]);
  }
}

static void send_error(uint16_t seq, uint16_t code, const char *text)
{
  uint8_t buf[PQS_MAX_PAYLOAD];
  struct pqs_writer w;
  pqs_writer_init(&w, buf, sizeof buf);
  pqs_put_u16(&w, code);
  pqs_put_str(&w, text);
  send_record(REC_ERROR, seq, &w);
}

void pqs_fault(const char *kind, uint32_t pc)
{
  char message[PQS_FAULT_MESSAGE_BYTES];
  pqs_fault_message(message, kind, pc);
  send_error(0, ERR_FAULT, message);
  for (;;) {
  }
}

static uint8_t *stack_lowest(void)
{
  uintptr_t limit = (uintptr_t)__pqscope_stack_limit;
  return (uint8_t *)((limit + 3u) & ~(uintptr_t)3u);
}

static void send_info(uint16_t seq)
{
  uint8_t here;
  uint8_t buf[PQS_MAX_PAYLOAD];
  struct pqs_writer w;
  pqs_writer_init(&w, buf, sizeof buf);
  pqs_put_u8(&w, PQS_PROTOCOL_VERSION);
  pqs_put_u8(&w, pqs_scheme.key_slots);
  pqs_put_u16(&w, PQS_MAX_MSG_BYTES);
  pqs_put_u32(&w, hal_clock_hz());
  pqs_put_u32(&w, (uint32_t)pqs_scheme.pk_bytes);
  pqs_put_u32(&w, (uint32_t)pqs_scheme.sk_bytes);
  pqs_put_u32(&w, (uint32_t)pqs_scheme.sig_bytes);
  pqs_put_u32(&w, (uint32_t)(&here - stack_lowest()));
  pqs_put_str(&w, hal_board_name());
  pqs_put_str(&w, pqs_scheme.name);
  pqs_put_str(&w, pqs_scheme.impl);
  pqs_put_str(&w, pqs_build_id);
  pqs_put_str(&w, "gcc " __VERSION__);
  pqs_put_u8(&w, pqs_probe_count);
  pqs_put_u32(&w, pqs_probe_self_cycles);
  pqs_put_u32(&w, pqs_probe_call_cycles);
  pqs_put_str(&w, hal_board_serial());
  pqs_put_str(&w, hal_clock_source());
  pqs_put_str(&w, hal_clock_fallback_reason());
  send_record(REC_INFO, seq, &w);
}

static int run_keygen(void)
{
  return pqs_scheme.keypair(pqs_slot_pk(pqs_state.counters.active_slot), pqs_slot_sk(pqs_state.counters.active_slot));
}

/* The virtual board's profiler marks each signature by this function's calls. */
static int run_sign(void)
{
  return pqs_scheme.sign(pqs_scheme.sig, &signature_len, message, pqs_state.counters.message_len,
                         pqs_slot_sk(pqs_state.counters.active_slot));
}

static int run_verify(void)
{
  return pqs_scheme.verify(pqs_scheme.sig, signature_len, message, pqs_state.counters.message_len,
                           pqs_slot_pk(pqs_state.counters.active_slot));
}

/* The buffers operation `op` is handed, each between guards (pqscope/guard.h). */
static uint32_t buffers_of(uint8_t op, struct pqs_guarded_buffer *out)
{
  uint32_t n = 0;
  uint8_t slot = pqs_state.counters.active_slot;
  out[n++] = (struct pqs_guarded_buffer){"message", message, PQS_MAX_MSG_BYTES};
  out[n++] = (struct pqs_guarded_buffer){"signature", pqs_scheme.sig, (uint32_t)pqs_scheme.sig_buffer_bytes};
  if (op == OP_VERIFY) {
    out[n++] = (struct pqs_guarded_buffer){"public key", pqs_slot_pk(slot), (uint32_t)pqs_scheme.pk_bytes};
    if (pqs_scheme.opened != NULL) {
      out[n++] = (struct pqs_guarded_buffer){"opened message", pqs_scheme.opened, (uint32_t)pqs_scheme.opened_bytes};
    }
  } else {
    if (op == OP_KEYGEN) {
      out[n++] = (struct pqs_guarded_buffer){"public key", pqs_slot_pk(slot), (uint32_t)pqs_scheme.pk_bytes};
    }
    out[n++] = (struct pqs_guarded_buffer){"secret key", pqs_slot_sk(slot), (uint32_t)pqs_scheme.sk_bytes};
  }
  return n;
}

/* noinline: its frame is the reference point above which the operation's stack use is counted.
 * The guards are armed outside the timed region, and checked after it. */
static __attribute__((noinline)) void measure(uint8_t op, struct measurement *m)
{
  static int (*const steps[OP_COUNT])(void) = {run_keygen, run_sign, run_verify};
  /* Static: this frame stays as small as the painter's margin (PAINT_GUARD_BYTES) assumes. */
  static struct pqs_guarded_buffer buffers[PQS_GUARD_MAX_ARMED];
  uint32_t count = buffers_of(op, buffers);
  if (op == OP_KEYGEN) {
    pqs_state.counters.slot_has_key[pqs_state.counters.active_slot / 8] |= (uint8_t)(1u << (pqs_state.counters.active_slot % 8));
    if (pqs_state.counters.active_slot == key_write.slot) {
      key_write.written = 0; /* a key written part way is gone: its write starts again at 0 */
    }
  }
  uint8_t *top = __builtin_frame_address(0);
  uint32_t *lowest = (uint32_t *)stack_lowest();
  uint32_t *painted_end = (uint32_t *)((uintptr_t)(top - PAINT_GUARD_BYTES) & ~(uintptr_t)3u);
  pqs_stack_paint(lowest, painted_end);
  hal_cycles_restart_period();
  pqs_guard_arm(1u + op, buffers, count);
  pqs_probes_start_operation();
  uint64_t start = hal_cycles();
  m->ret = steps[op]();
  uint64_t end = hal_cycles();
  pqs_probes_end_operation();
  m->guards_intact = pqs_guard_disarm(&m->violation);
  m->stack_bytes = (uint32_t)pqs_stack_used(lowest, painted_end, top);
  m->stack_overflowed = m->stack_bytes >= (uint32_t)(top - (uint8_t *)lowest);
  m->cycles = end - start - pqs_state.counters.counter_overhead;
}

/* An operation that wrote outside its buffers: an error naming it, the buffer and the offset in
 * place of its sample (its cycles may count a changed counter). */
static void send_guard_error(uint16_t seq, uint8_t op, const struct pqs_guard_violation *violation)
{
  char text[160];
  pqs_guard_describe(text, sizeof text, op_names[op], violation);
  send_error(seq, ERR_GUARD, text);
}

/* Whether a measured operation kept to its stack and its buffers; if not, the error that says
 * how (a stack overflow first: it explains the guards it overwrote) has been sent. */
static bool stayed_in_bounds(uint16_t seq, uint8_t op, const struct measurement *m)
{
  char text[160];
  if (m->stack_overflowed) {
    pqs_stack_overflow_describe(text, sizeof text, op_names[op], m->stack_bytes, (uintptr_t)stack_lowest());
    send_error(seq, ERR_STACK_OVERFLOW, text);
    return false;
  }
  if (!m->guards_intact) {
    send_guard_error(seq, op, &m->violation);
    return false;
  }
  return true;
}

/* An untimed verification (SIGN_SLOT's, the corrupted copy's), guarded as a timed one: false,
 * after the error, if it wrote outside its buffers. */
static bool verify_untimed(uint16_t seq, bool *accepted)
{
  struct pqs_guarded_buffer buffers[PQS_GUARD_MAX_ARMED];
  struct pqs_guard_violation violation;
  pqs_guard_arm(1u + OP_VERIFY, buffers, buffers_of(OP_VERIFY, buffers));
  *accepted = run_verify() == 0;
  if (!pqs_guard_disarm(&violation)) {
    send_guard_error(seq, OP_VERIFY, &violation);
    return false;
  }
  return true;
}

/* The fixed cost of the two hal_cycles() calls around an operation, subtracted from every sample. */
static void calibrate_counter(void)
{
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 8; i++) {
    uint64_t start = hal_cycles();
    uint64_t end = hal_cycles();
    if (end - start < best) {
      best = end - start;
    }
  }
  pqs_state.counters.counter_overhead = best;
}

/* The operation's probe counts are those measure() left in the probe records. */
static void send_sample(uint16_t seq, uint32_t sample_id, uint8_t op, uint8_t status,
                        const struct measurement *m)
{
  uint8_t buf[SAMPLE_PAYLOAD_BYTES];
  struct pqs_writer w;
  pqs_writer_init(&w, buf, sizeof buf);
  pqs_put_u32(&w, sample_id);
  pqs_put_u8(&w, op);
  pqs_put_u8(&w, status);
  pqs_put_u8(&w, pqs_probe_count);
  pqs_put_u8(&w, (uint8_t)(int8_t)(m->ret < -128 ? -128 : m->ret > 127 ? 127 : m->ret));
  pqs_put_u64(&w, m->cycles);
  pqs_put_u32(&w, m->stack_bytes);
  for (uint8_t i = 0; i < pqs_probe_count; i++) {
    pqs_put_u64(&w, (uint64_t)pqs_probes[i]->measured.cycles);
    pqs_put_u32(&w, pqs_probes[i]->measured.calls);
  }
  send_record(REC_SAMPLE, seq, &w);
}

/* Where the signature proper starts in what the harness holds: after the message when the
 * implementation's signed message begins with it (pqm4's m || sig; PQClean's sig || m starts with
 * the signature), else at 0. */
static size_t signature_start(void)
{
  size_t msg_len = pqs_state.counters.message_len;
  if (pqs_scheme.opened != NULL && msg_len < signature_len && memcmp(pqs_scheme.sig, message, msg_len) == 0) {
    return msg_len;
  }
  return 0;
}

/* After the timed verification: the same signature with a (seed-chosen) bit of its first byte
 * flipped must fail. The first byte, not any: every scheme's verification hashes or decodes its
 * signature's first bytes (a salt, nonce, challenge hash, header, or the first packed element),
 * while a bit anywhere can land where an encoding leaves room that verification does not read
 * (CROSS 1.1's unused tail of its fixed-size Merkle proof and seed-tree path, Falcon round 3's
 * padding bits): a malleable encoding, not a verification that does not verify
 * (docs/pages/statistics.md). False, after the error, if that verification wrote outside its
 * buffers. */
static bool check_forgery_rejected(uint16_t seq, uint8_t *status)
{
  uint32_t bit;
  bool accepted;
  pqs_drbg_generate(&pqs_global_drbg, (uint8_t *)&bit, sizeof bit);
  uint8_t *first = &pqs_scheme.sig[signature_start()];
  *first ^= (uint8_t)(1u << (bit % 8));
  if (!verify_untimed(seq, &accepted)) {
    return false;
  }
  *first ^= (uint8_t)(1u << (bit % 8));
  *status = accepted ? STATUS_FORGERY_ACCEPTED : STATUS_OK;
  return true;
}

static void send_digest(uint16_t seq, uint32_t sample_id)
{
  uint8_t buf[4 + PQS_SHA3_256_BYTES];
  struct pqs_writer w;
  pqs_writer_init(&w, buf, sizeof buf);
  pqs_put_u32(&w, sample_id);
  pqs_transcript_digest(message, pqs_state.counters.message_len, signature_len, buf + w.len);
  w.len += PQS_SHA3_256_BYTES;
  send_record(REC_DIGEST, seq, &w);
}

static void send_done(uint16_t seq, uint32_t sample_id, uint8_t status)
{
  uint8_t buf[5];
  struct pqs_writer w;
  pqs_writer_init(&w, buf, sizeof buf);
  pqs_put_u32(&w, sample_id);
  pqs_put_u8(&w, status);
  send_record(REC_DONE, seq, &w);
}

static void handle_run(uint16_t seq, const struct pqs_frame *frame)
{
  if (frame->payload_len != RUN_PAYLOAD_BYTES) {
    send_error(seq, ERR_BAD_LENGTH, "RUN payload must be 40 bytes");
    return;
  }
  struct pqs_reader r;
  uint8_t seed[PQS_DRBG_SEED_BYTES];
  pqs_reader_init(&r, frame->payload, frame->payload_len);
  uint8_t ops = pqs_get_u8(&r);
  uint8_t flags = pqs_get_u8(&r);
  uint16_t msg_len = pqs_get_u16(&r);
  uint32_t sample_id = pqs_get_u32(&r);
  pqs_get_bytes(&r, seed, sizeof seed);
  if ((flags & ~RUN_FLAG_DIGEST) != 0 || ops == 0 || ops >= (1u << OP_COUNT) ||
      msg_len > PQS_MAX_MSG_BYTES) {
    send_error(seq, ERR_BAD_ARGUMENT, "RUN: flags 0 or 1, ops 1..7, msg_len <= max_msg_len");
    return;
  }

  pqs_current_sample_id = sample_id;
  pqs_drbg_seed(&pqs_global_drbg, seed);
  pqs_state.counters.active_slot = 0;
  pqs_state.counters.message_len = 0;
  signature_len = 0;
  uint8_t first_failure = STATUS_OK;
  for (uint8_t op = 0; op < OP_COUNT; op++) {
    if (op == OP_SIGN) {
      pqs_state.counters.message_len = msg_len;
      pqs_drbg_generate(&pqs_global_drbg, message, msg_len);
    }
    struct measurement m;
    measure(op, &m);
    if (!stayed_in_bounds(seq, op, &m)) {
      return;
    }
    uint8_t status = STATUS_OK;
    if (m.ret != 0) {
      status = op == OP_VERIFY ? STATUS_VALID_REJECTED : STATUS_OP_FAILED;
    } else if (op == OP_VERIFY && !check_forgery_rejected(seq, &status)) {
      return;
    }
    if (ops & (1u << op)) {
      send_sample(seq, sample_id, op, status, &m);
    }
    if (status != STATUS_OK) {
      first_failure = status;
      break;
    }
  }

  if (flags & RUN_FLAG_DIGEST) {
    send_digest(seq, sample_id);
  }
  send_done(seq, sample_id, first_failure);
}

static bool slot_has_key(uint8_t slot)
{
  return pqs_state.counters.slot_has_key[slot / 8] & (1u << (slot % 8));
}

/* The payload of KEYGEN_SLOT and SIGN_SLOT; false (after an ERROR) if it is malformed. Selects
 * the slot and seeds the DRBG; `message_seed` (SIGN_SLOT only, else NULL) receives the seed of the
 * message if the command carries one (SLOT_FLAG_MESSAGE_SEED), else NULL. */
static bool parse_slot_command(uint16_t seq, const struct pqs_frame *frame, uint16_t *msg_len,
                               uint32_t *sample_id, const uint8_t **message_seed)
{
  uint8_t flags = frame->payload_len > 1 ? frame->payload[1] : 0;
  bool seeded_message = message_seed && flags == SLOT_FLAG_MESSAGE_SEED;
  if (frame->payload_len != SLOT_PAYLOAD_BYTES + (seeded_message ? PQS_DRBG_SEED_BYTES : 0u)) {
    send_error(seq, ERR_BAD_LENGTH, "KEYGEN_SLOT/SIGN_SLOT payload must be 40 bytes (SIGN_SLOT with a message "
                                    "seed: 72)");
    return false;
  }
  struct pqs_reader r;
  uint8_t seed[PQS_DRBG_SEED_BYTES];
  pqs_reader_init(&r, frame->payload, frame->payload_len);
  uint8_t slot = pqs_get_u8(&r);
  (void)pqs_get_u8(&r); /* flags, read above */
  *msg_len = pqs_get_u16(&r);
  *sample_id = pqs_get_u32(&r);
  pqs_get_bytes(&r, seed, sizeof seed);
  if (message_seed)
    *message_seed = seeded_message ? frame->payload + SLOT_PAYLOAD_BYTES : NULL;
  if (slot >= pqs_scheme.key_slots || (flags != 0 && !seeded_message) || *msg_len > PQS_MAX_MSG_BYTES) {
    send_error(seq, ERR_BAD_ARGUMENT, "slot must be < INFO.key_slots, flags 0 (SIGN_SLOT: or 1, a message "
                                      "seed), msg_len <= max_msg_len");
    return false;
  }
  pqs_state.counters.active_slot = slot;
  pqs_current_sample_id = *sample_id;
  pqs_drbg_seed(&pqs_global_drbg, seed);
  return true;
}

/* KEYGEN_SLOT: a key pair into a slot of the pool (the key classes of a constant-time test are
 * generated outside the signatures' timed region). */
static void handle_keygen_slot(uint16_t seq, const struct pqs_frame *frame)
{
  uint16_t msg_len;
  uint32_t sample_id;
  if (!parse_slot_command(seq, frame, &msg_len, &sample_id, NULL)) {
    return;
  }
  struct measurement m;
  measure(OP_KEYGEN, &m);
  if (!stayed_in_bounds(seq, OP_KEYGEN, &m)) {
    return;
  }
  uint8_t status = m.ret == 0 ? STATUS_OK : STATUS_OP_FAILED;
  send_sample(seq, sample_id, OP_KEYGEN, status, &m);
  send_done(seq, sample_id, status);
}

/* SIGN_SLOT: one timed signature of a DRBG message with a slot's key, verified afterwards. */
static void handle_sign_slot(uint16_t seq, const struct pqs_frame *frame)
{
  uint16_t msg_len;
  uint32_t sample_id;
  const uint8_t *message_seed;
  if (!parse_slot_command(seq, frame, &msg_len, &sample_id, &message_seed)) {
    return;
  }
  if (!slot_has_key(pqs_state.counters.active_slot)) {
    send_error(seq, ERR_BAD_ARGUMENT, "SIGN_SLOT: the slot has no key yet (send KEYGEN_SLOT or KEY_WRITE)");
    return;
  }
  pqs_state.counters.message_len = msg_len;
  if (message_seed) {
    /* The message from a seed of its own (the exact check's variants sign one message); the
     * signing randomness from the command's seed, as without. */
    struct pqs_drbg message_drbg;
    pqs_drbg_seed(&message_drbg, message_seed);
    pqs_drbg_generate(&message_drbg, message, msg_len);
  } else {
    pqs_drbg_generate(&pqs_global_drbg, message, msg_len);
  }
  /* For the virtual board's exact check (pqscope taint): the key is the secret of this signature. */
  pqs_taint_secret(pqs_slot_sk(pqs_state.counters.active_slot), pqs_scheme.sk_bytes);
  struct measurement m;
  measure(OP_SIGN, &m);
  if (!stayed_in_bounds(seq, OP_SIGN, &m)) {
    return;
  }
  uint8_t status = STATUS_OP_FAILED;
  bool accepted;
  if (m.ret == 0) {
    if (!verify_untimed(seq, &accepted)) {
      return;
    }
    status = STATUS_VALID_REJECTED;
    if (accepted && !check_forgery_rejected(seq, &status)) {
      return;
    }
  }
  send_sample(seq, sample_id, OP_SIGN, status, &m);
  send_done(seq, sample_id, status);
}

/* Byte `at` of a slot's key pair, pk then sk (a guard lies between them). */
static uint8_t *key_byte(uint8_t slot, uint32_t at)
{
  return at < pqs_scheme.pk_bytes ? pqs_slot_pk(slot) + at : pqs_slot_sk(slot) + (at - pqs_scheme.pk_bytes);
}

/* The slot and offset of KEY_READ and KEY_WRITE; false (after an ERROR) if they are malformed. */
static bool parse_key_command(uint16_t seq, const struct pqs_frame *frame, uint8_t *slot, uint32_t *offset)
{
  struct pqs_reader r;
  pqs_reader_init(&r, frame->payload, frame->payload_len);
  *slot = pqs_get_u8(&r);
  *offset = pqs_get_u32(&r);
  if (*slot >= pqs_scheme.key_slots) {
    send_error(seq, ERR_BAD_ARGUMENT, "KEY_READ/KEY_WRITE: slot must be < INFO.key_slots");
    return false;
  }
  return true;
}

/* KEY_READ: a slot's key pair, a chunk at a time (a key made once serves the boards of a test). */
static void handle_key_read(uint16_t seq, const struct pqs_frame *frame)
{
  uint8_t slot;
  uint32_t offset, total = (uint32_t)(pqs_scheme.pk_bytes + pqs_scheme.sk_bytes);
  if (frame->payload_len != KEY_COMMAND_BYTES) {
    send_error(seq, ERR_BAD_LENGTH, "KEY_READ payload must be 5 bytes");
    return;
  }
  if (!parse_key_command(seq, frame, &slot, &offset)) {
    return;
  }
  if (!slot_has_key(slot) || offset > total) {
    send_error(seq, ERR_BAD_ARGUMENT, "KEY_READ: the slot has no key, or the offset is beyond it");
    return;
  }
  uint32_t n = total - offset < KEY_CHUNK_BYTES ? total - offset : KEY_CHUNK_BYTES;
  uint8_t buf[9 + KEY_CHUNK_BYTES];
  struct pqs_writer w;
  pqs_writer_init(&w, buf, sizeof buf);
  pqs_put_u8(&w, slot);
  pqs_put_u32(&w, offset);
  pqs_put_u32(&w, total);
  for (uint32_t i = 0; i < n; i++) {
    pqs_put_u8(&w, *key_byte(slot, offset + i));
  }
  send_record(REC_KEY_BYTES, seq, &w);
}

/* KEY_WRITE: a key pair KEY_READ gave, into a slot, a chunk at a time in order; the slot holds a
 * key once its last byte is written. A chunk sent again (its answer was lost) is written again. */
static void handle_key_write(uint16_t seq, const struct pqs_frame *frame)
{
  uint8_t slot;
  uint32_t offset, total = (uint32_t)(pqs_scheme.pk_bytes + pqs_scheme.sk_bytes);
  uint32_t n = frame->payload_len > KEY_COMMAND_BYTES ? frame->payload_len - KEY_COMMAND_BYTES : 0u;
  if (n == 0 || n > KEY_CHUNK_BYTES) {
    send_error(seq, ERR_BAD_LENGTH, "KEY_WRITE payload must be 5 bytes and 1 to 480 bytes of the key");
    return;
  }
  if (!parse_key_command(seq, frame, &slot, &offset)) {
    return;
  }
  if (offset > total || n > total - offset || (offset > 0 && (slot != key_write.slot || offset > key_write.written))) {
    send_error(seq, ERR_BAD_ARGUMENT, "KEY_WRITE: chunks go in order from offset 0, within the key pair");
    return;
  }
  if (offset == 0) {
    key_write.slot = slot;
    pqs_state.counters.slot_has_key[slot / 8] &= (uint8_t)~(1u << (slot % 8));
  }
  for (uint32_t i = 0; i < n; i++) {
    *key_byte(slot, offset + i) = frame->payload[KEY_COMMAND_BYTES + i];
  }
  key_write.written = offset + n;
  if (key_write.written == total) {
    pqs_state.counters.slot_has_key[slot / 8] |= (uint8_t)(1u << (slot % 8));
  }
  send_done(seq, 0, STATUS_OK);
}

/* PROBE: the name of one of the image's probes. */
static void handle_probe(uint16_t seq, const struct pqs_frame *frame)
{
  if (frame->payload_len != 1) {
    send_error(seq, ERR_BAD_LENGTH, "PROBE payload must be 1 byte");
    return;
  }
  uint8_t index = frame->payload[0];
  if (index >= pqs_probe_count) {
    send_error(seq, ERR_BAD_ARGUMENT, "PROBE: index must be < INFO.probes");
    return;
  }
  uint8_t buf[1 + 1 + 255];
  struct pqs_writer w;
  pqs_writer_init(&w, buf, sizeof buf);
  pqs_put_u8(&w, index);
  pqs_put_str(&w, pqs_probes[index]->name);
  send_record(REC_PROBE_NAME, seq, &w);
}

static void handle_frame(const struct pqs_frame *frame)
{
  if (frame->version != PQS_PROTOCOL_VERSION) {
    send_error(frame->seq, ERR_BAD_VERSION, "protocol version 6 expected");
    return;
  }
  switch (frame->type) {
  case CMD_HELLO:
    send_info(frame->seq);
    break;
  case CMD_RUN:
    handle_run(frame->seq, frame);
    break;
  case CMD_KEYGEN_SLOT:
    handle_keygen_slot(frame->seq, frame);
    break;
  case CMD_SIGN_SLOT:
    handle_sign_slot(frame->seq, frame);
    break;
  case CMD_PROBE:
    handle_probe(frame->seq, frame);
    break;
  case CMD_KEY_READ:
    handle_key_read(frame->seq, frame);
    break;
  case CMD_KEY_WRITE:
    handle_key_write(frame->seq, frame);
    break;
  default:
    send_error(frame->seq, ERR_UNKNOWN_COMMAND, "unknown command");
    break;
  }
}

static struct pqs_receiver receiver;

void pqs_harness_start(void)
{
  calibrate_counter();
  pqs_probes_calibrate();
  pqs_receiver_init(&receiver);
  /* Zero at boot already; cleared for hosts that start the harness again in one process. */
  memset(pqs_state.counters.slot_has_key, 0, sizeof pqs_state.counters.slot_has_key);
  key_write.written = 0;
  send_info(0);
}

void pqs_harness_receive_byte(uint8_t byte)
{
  struct pqs_frame frame;
  switch (pqs_receiver_push(&receiver, byte, &frame)) {
  case PQS_RX_FRAME:
    handle_frame(&frame);
    break;
  case PQS_RX_BAD_FRAME:
    send_error(0, ERR_BAD_FRAME, "frame dropped: bad COBS, length or CRC");
    break;
  case PQS_RX_NONE:
    break;
  }
}
