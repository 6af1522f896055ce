#include <pqscope/guard.h>

#include <string.h>


/* The wrap count's complement agrees with the count from the start. */
struct pqs_guarded_state pqs_guarded_state = {.state = {.counter_wraps_complement = UINT64_MAX}};

/* The canary of the guard byte at `place`: varies with its address, so that neither zeros nor a
 * repeated byte (the usual overflow) pass for it, and a guard shared by two buffers (a key slot's
 * between pk and sk) holds the same canaries for both. */
static uint8_t canary(const uint8_t *place)
{
  return (uint8_t)(0xA5u ^ ((uintptr_t)place * 0x3Bu));
}

void pqs_guard_fill(uint8_t *buffer, size_t bytes)
{
  for (size_t i = 0; i < PQS_GUARD_BYTES; i++) {
    buffer[-1 - (ptrdiff_t)i] = canary(&buffer[-1 - (ptrdiff_t)i]);
    buffer[bytes + i] = canary(&buffer[bytes + i]);
  }
}

bool pqs_guard_find(const uint8_t *buffer, size_t bytes, int32_t *offset)
{
  for (size_t i = 0; i < PQS_GUARD_BYTES; i++) {
    if (buffer[bytes + i] != canary(&buffer[bytes + i])) {
      *offset = (int32_t)(bytes + i);
      return true;
    }
  }
  for (size_t i = 0; i < PQS_GUARD_BYTES; i++) {
    if (buffer[-1 - (ptrdiff_t)i] != canary(&buffer[-1 - (ptrdiff_t)i])) {
      *offset = -1 - (int32_t)i;
      return true;
    }
  }
  return false;
}

void pqs_guard_arm(uint32_t operation, const struct pqs_guarded_buffer *buffers, uint32_t count)
{
  pqs_guard_fill((uint8_t *)&pqs_state, sizeof pqs_state);
  memcpy(&pqs_state.counters_at_start, &pqs_state.counters, sizeof pqs_state.counters); /* padding too */
  pqs_state.armed_count = count;
  for (uint32_t i = 0; i < count; i++) {
    pqs_state.armed[i] = buffers[i];
    pqs_guard_fill(buffers[i].start, buffers[i].bytes);
  }
  pqs_state.operation = operation;
}

/* noinline: the virtual board knows the end of an operation by this function's write of 0. */
__attribute__((noinline)) bool pqs_guard_disarm(struct pqs_guard_violation *violation)
{
  pqs_state.operation = 0;
  violation->buffer = "harness state";
  violation->bytes = sizeof pqs_state;
  if (pqs_guard_find((const uint8_t *)&pqs_state, sizeof pqs_state, &violation->offset)) {
    return false;
  }
  uint64_t wraps = pqs_state.counter_wraps, complement = ~pqs_state.counter_wraps_complement;
  violation->buffer = "harness's cycle counter";
  violation->bytes = sizeof wraps;
  for (int32_t i = 0; i < (int32_t)sizeof wraps; i++) {
    if (((wraps ^ complement) >> (8 * i)) & 0xFFu) {
      violation->offset = i;
      return false;
    }
  }
  const uint8_t *now = (const uint8_t *)&pqs_state.counters;
  const uint8_t *before = (const uint8_t *)&pqs_state.counters_at_start;
  violation->buffer = "harness's counters";
  violation->bytes = sizeof pqs_state.counters;
  for (size_t i = 0; i < sizeof pqs_state.counters; i++) {
    if (now[i] != before[i]) {
      violation->offset = (int32_t)i;
      return false;
    }
  }
  for (uint32_t i = 0; i < pqs_state.armed_count; i++) {
    const struct pqs_guarded_buffer *b = &pqs_state.armed[i];
    if (pqs_guard_find(b->start, b->bytes, &violation->offset)) {
      violation->buffer = b->name;
      violation->bytes = b->bytes;
      return false;
    }
  }
  return true;
}

/* A text being written into a fixed buffer, cut at its end (no printf on the board). */
struct text {
  char *out;
  size_t size, len;
};

static void append(struct text *t, const char *s)
{
  while (*s != '\0' && t->len + 1 < t->size) {
    t->out[t->len++] = *s++;
  }
  t->out[t->len] = '\0';
}

static void append_number(struct text *t, int32_t value)
{
  char digits[12];
  size_t n = sizeof digits - 1;
  uint32_t magnitude = value < 0 ? 0u - (uint32_t)value : (uint32_t)value;
  digits[n] = '\0';
  do {
    digits[--n] = (char)('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  if (value < 0) {
    digits[--n] = '-';
  }
  append(t, digits + n);
}

static void append_hex(struct text *t, uintptr_t value)
{
  char digits[11] = "0x";
  for (int i = 0; i < 8; i++) {
    digits[2 + i] = "0123456789abcdef"[(value >> (28 - 4 * i)) & 0xFu];
  }
  digits[10] = '\0';
  append(t, digits);
}

void pqs_stack_overflow_describe(char *out, size_t size, const char *operation, uint32_t bytes,
                                 uintptr_t limit)
{
  struct text t = {out, size, 0};
  append(&t, operation);
  append(&t, " used the whole stack, ");
  append_number(&t, (int32_t)bytes);
  append(&t, " bytes down to ");
  append_hex(&t, limit);
  append(&t, " (the end of .bss): it overflowed into the data below");
}

void pqs_guard_describe(char *out, size_t size, const char *operation, const struct pqs_guard_violation *v)
{
  struct text t = {out, size, 0};
  append(&t, operation);
  append(&t, " wrote at offset ");
  append_number(&t, v->offset);
  append(&t, " of the ");
  append(&t, v->buffer);
  if (v->offset < 0) {
    append(&t, " (its start - ");
    append_number(&t, -v->offset);
  } else if (v->offset < (int32_t)v->bytes) {
    append(&t, " (inside it: a store that skipped the guards");
  } else {
    append(&t, " (its ");
    append_number(&t, (int32_t)v->bytes);
    append(&t, " bytes + ");
    append_number(&t, v->offset - (int32_t)v->bytes);
  }
  append(&t, ")");
}
