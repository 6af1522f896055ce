/* Guard regions: the harness's own state out of the implementation's reach.
 *
 * Every buffer the harness hands the implementation (message, signature, public and secret key,
 * opened message) lies between two guards of PQS_GUARD_BYTES filled with a canary pattern before
 * each operation and checked after it: a write past either end changes a guard, and the harness
 * answers with an error naming the operation, the buffer and the offset instead of a sample. The
 * harness's counters (the cycle counter's wraps, its calibration, the message's length, the key
 * slot and which slots hold keys) live in one guarded object too, pqs_guarded_state, so an
 * overflow of those buffers reaches them only through a guard, and a store that skips the guards
 * is seen by their copies.
 *
 * The virtual board can watch these objects exactly (pqscope-vboard --watch-guards, which the host
 * uses to replay a sample the harness found at fault: boards/virtual/emulator/guard_watch.c): it
 * finds every data symbol named pqs_guarded_*, reads the buffers of the running operation from
 * pqs_guarded_state (layout below, which it relies on) when `operation` turns non-zero, and stops
 * with the writing instruction when the implementation writes a guard or the state. */
#ifndef PQSCOPE_GUARD_H
#define PQSCOPE_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PQS_GUARD_BYTES 64
/* The buffers one operation is handed: message, signature, public or secret key, opened. */
#define PQS_GUARD_MAX_ARMED 4

/* A buffer with its guards around it: [PQS_GUARD_BYTES][bytes][PQS_GUARD_BYTES]. */
#define PQS_GUARDED(buffer_bytes)                                                                  \
  struct {                                                                                         \
    uint8_t before[PQS_GUARD_BYTES];                                                               \
    uint8_t bytes[buffer_bytes];                                                                   \
    uint8_t after[PQS_GUARD_BYTES];                                                                \
  }

/* One buffer an operation may write, guarded by PQS_GUARD_BYTES on each side. Three words (the
 * virtual board reads them): the name's address, the buffer's, its size. */
struct pqs_guarded_buffer {
  const char *name;
  uint8_t *start;
  uint32_t bytes;
};

/* The harness's counters that no operation changes. */
struct pqs_harness_counters {
  uint64_t counter_overhead; /* the cycle counter's calibration */
  uint32_t message_len;
  uint8_t active_slot;
  uint8_t slot_has_key[32]; /* bitmap over the (at most 255) key slots */
};

/* The harness's state. `operation` (1 keygen, 2 sign, 3 verify; 0 between operations) and
 * `armed` (the buffers it is handed, `armed_count` of them) come first, at fixed offsets: the
 * virtual board reads them. A store that skips the guards is seen too: the wrap count is kept
 * with its complement, and the counters with a copy taken when the operation starts. */
struct pqs_harness_state {
  volatile uint32_t operation;
  uint32_t armed_count;
  struct pqs_guarded_buffer armed[PQS_GUARD_MAX_ARMED];
  volatile uint64_t counter_wraps; /* the board's cycle counter extension (hal.h) */
  volatile uint64_t counter_wraps_complement;
  struct pqs_harness_counters counters;
  struct pqs_harness_counters counters_at_start;
};

struct pqs_guarded_state {
  uint8_t before[PQS_GUARD_BYTES];
  struct pqs_harness_state state;
  uint8_t after[PQS_GUARD_BYTES];
};
extern struct pqs_guarded_state pqs_guarded_state;
#define pqs_state (pqs_guarded_state.state)

/* The board's cycle counter wrapped (or was restarted): called by its interrupt handler. */
static inline void pqs_counter_wrapped(void)
{
  pqs_state.counter_wraps++;
  pqs_state.counter_wraps_complement = ~pqs_state.counter_wraps;
}

/* A guard byte that no longer holds its canary: which buffer, and where relative to its start
 * (negative: before it; `bytes` or more: past its end). */
struct pqs_guard_violation {
  const char *buffer;
  uint32_t bytes;
  int32_t offset;
};

/* Fills the guards around `buffer` (bytes long) with the canary. */
void pqs_guard_fill(uint8_t *buffer, size_t bytes);

/* The first guard byte around `buffer` that lost its canary, as an offset from the buffer's
 * start: those past its end first, nearest first, then those before it, nearest first. False if
 * both guards are intact. */
bool pqs_guard_find(const uint8_t *buffer, size_t bytes, int32_t *offset);

/* Before an operation: fills the guards of the `count` buffers it is handed and of the state,
 * records them for the virtual board, then marks `operation` (1 + its op number) as running. */
void pqs_guard_arm(uint32_t operation, const struct pqs_guarded_buffer *buffers, uint32_t count);

/* After it: marks no operation running, then checks every guard it armed. False, with the first
 * violation, if one lost its canary. */
bool pqs_guard_disarm(struct pqs_guard_violation *violation);

/* "sign wrote at offset 60 of the signature (its 32 bytes + 28)", "... (its start - 3)",
 * into out (at most `size` bytes, NUL-terminated). */
void pqs_guard_describe(char *out, size_t size, const char *operation, const struct pqs_guard_violation *v);

/* "sign used the whole stack, 2048 bytes down to 0x20000b08 (the end of .bss): it overflowed into
 * the data below", for an operation whose stack use reached the lowest painted word. */
void pqs_stack_overflow_describe(char *out, size_t size, const char *operation, uint32_t bytes,
                                 uintptr_t limit);

#endif
