/* The probe table of an image without probes. A probed image's generated table (pqs_probe_table in
 * pqscope/probe.h) takes its place; a file of its own, so that no code reading the table sees the
 * default's constants. */
#include <pqscope/probe.h>

#include <stddef.h>

__attribute__((weak)) struct pqs_probe *const pqs_probes[1] = {NULL};
__attribute__((weak)) const uint8_t pqs_probe_count = 0;
