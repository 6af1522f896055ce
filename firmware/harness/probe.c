/* Probes (pqscope/probe.h): the calibration and the per-operation counts. The timing itself is the
 * runtime's, probe_runtime.S. */
#include <pqscope/hal.h>
#include <pqscope/probe.h>

#include <stddef.h>

#ifdef __arm__
_Static_assert(offsetof(struct pqs_probe, cycles) == PQS_PROBE_CYCLES, "probe.h offsets");
_Static_assert(offsetof(struct pqs_probe, calls) == PQS_PROBE_CALLS, "probe.h offsets");
_Static_assert(offsetof(struct pqs_probe, active) == PQS_PROBE_ACTIVE, "probe.h offsets");
_Static_assert(offsetof(struct pqs_probe, real) == PQS_PROBE_REAL, "probe.h offsets");
_Static_assert(offsetof(struct pqs_probe, name) == PQS_PROBE_NAME, "probe.h offsets");
_Static_assert(sizeof(struct pqs_probe) == PQS_PROBE_BYTES, "probe.h offsets");
#endif

/* The record of the runtime's calibration probe (__wrap_pqs_probe_empty). */
struct pqs_probe pqs_probe_calibration = {.real = pqs_probe_empty, .name = "pqs_probe_empty"};

/* Minimum over several calls: an interrupt may land in any one of them. */
#define CALIBRATION_CALLS 8

/* Never inlined: the calibration's two measurements then call through the same instruction, so
 * they return to the same place, whose alignment costs what it costs (a branch landing on a
 * 32-bit instruction at a halfword address takes a cycle more) in both. */
__attribute__((noinline)) uint64_t pqs_fewest_cycles(void (*fn)(void))
{
  uint64_t fewest = UINT64_MAX;
  for (int i = 0; i < CALIBRATION_CALLS; i++) {
    uint64_t start = hal_cycles();
    fn();
    uint64_t cycles = hal_cycles() - start;
    fewest = cycles < fewest ? cycles : fewest;
  }
  return fewest;
}

void pqs_probes_calibrate(void)
{
  pqs_probe_counter_start();
  pqs_probe_self_cycles = 0;
  pqs_probe_call_cycles = 0;
  int64_t self = INT64_MAX;
  for (int i = 0; i < CALIBRATION_CALLS; i++) {
    pqs_probe_calibration.cycles = 0;
    __wrap_pqs_probe_empty();
    self = pqs_probe_calibration.cycles < self ? pqs_probe_calibration.cycles : self;
  }
  pqs_probe_self_cycles = (uint32_t)self;
  pqs_probe_call_cycles =
    (uint32_t)(pqs_fewest_cycles(__wrap_pqs_probe_empty) - pqs_fewest_cycles(pqs_probe_empty));
}

void pqs_probes_start_operation(void)
{
  for (uint8_t i = 0; i < pqs_probe_count; i++) {
    pqs_probes[i]->cycles = 0;
    pqs_probes[i]->calls = 0;
  }
}

void pqs_probes_end_operation(void)
{
  for (uint8_t i = 0; i < pqs_probe_count; i++) {
    struct pqs_probe *probe = pqs_probes[i];
    probe->measured = (struct pqs_probe_counts){probe->cycles, probe->calls};
  }
}
