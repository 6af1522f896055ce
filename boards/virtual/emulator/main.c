/* pqscope-vboard: runs a firmware ELF built for the STM32F4 Discovery board on an emulated
 * Cortex-M4 with a cycle model, so cycle counts can be measured without the board. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "elf.h"
#include "clock.h"
#include "flash_art.h"
#include "machine.h"
#include "memmap.h"
#include "profile.h"
#include "taint.h"
#include "uart.h"

#define MAX_PUBLIC_FUNCTIONS 16
#define MAX_TAINT_OPTIONS 16

/* --taint-public-secret-bytes OFFSET:BYTES (BYTES > 0) */
static int taint_secret_bytes_option(struct taint *t, const char *spec)
{
	char *end;
	unsigned long offset = strtoul(spec, &end, 0), bytes;
	if (end == spec || *end != ':' || offset > UINT32_MAX)
		goto bad;
	const char *count = end + 1;
	bytes = strtoul(count, &end, 0);
	if (*end || end == count || !bytes || bytes > UINT32_MAX)
		goto bad;
	return taint_public_secret_bytes(t, (uint32_t)offset, (uint32_t)bytes);
bad:
	fprintf(stderr, "vboard: error: --taint-public-secret-bytes '%s': want OFFSET:BYTES with "
			"BYTES > 0\n", spec);
	return -1;
}

static struct machine machine;

static void usage(void)
{
	fprintf(stderr,
		"usage: pqscope-vboard --elf FILE|--bin FILE [--chip stm32f407|stm32l4r5]\n"
		"                      [--uart stdio|pty] [--pty-link PATH]\n"
		"                      [--uid HEX24]\n"
		"                      [--max-cycles N] [--stats FILE.json] [--profile FILE.json]\n"
		"                      [--flash-timing modelled|free] [--cycle-jitter N]\n"
		"                      [--hse present|absent] [--watch-guards]\n"
		"                      [--profile-calls NAME[,NAME...]]\n"
		"                      [--intervals FILE.jsonl --interval-function NAME\n"
		"                       [--interval-id-symbol SYMBOL] [--public-function NAME]...]\n"
		"                      [--taint FILE.json --taint-function NAME\n"
		"                       [--taint-public-return NAME]...\n"
		"                       [--taint-public-within NAME[@LO-HI[,LO-HI]...]]...\n"
		"                       [--taint-public-argument NAME:INDEX:BYTES]...\n"
		"                       [--taint-public-secret-bytes OFFSET:BYTES]...\n"
		"                       [--taint-calls FILE.jsonl [--taint-id-symbol SYMBOL]]\n"
		"                       [--taint-leaf-summaries on|off]]\n"
		"                      [--native-calls on|off]\n");
}

static void on_signal(int sig)
{
	machine.signal = sig;
	machine.next_event = 0; /* the next block takes the slow path and stops */
}

/* Speed is model cycles per second of emulation: the time blocked on the host is not the
 * emulator's. */
static int write_stats(const char *path, const struct machine *m, double wall, double host_wait)
{
	char taint_line[200] = "", native_line[4096];
	const struct art *art = m->art;
	const struct art_counts *c = &art->counts;
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "vboard: error: cannot write %s\n", path);
		return -1;
	}
	double run = wall - host_wait;
	native_calls_stats(m, native_line, sizeof native_line);
	if (m->taint) { /* instructions checked inside calls of the --taint-function; leaf calls */
		uint64_t recorded, replayed, rehooks;
		taint_leaf_counts(m->taint, &recorded, &replayed, &rehooks);
		snprintf(taint_line, sizeof taint_line, ", \"taint_instructions\": %llu, \"taint_leaf_calls\": "
			 "{\"recorded\": %llu, \"replayed\": %llu, \"rehooks\": %llu}",
			 (unsigned long long)taint_instructions(m->taint), (unsigned long long)recorded,
			 (unsigned long long)replayed, (unsigned long long)rehooks);
	}
	fprintf(f,
		"{\"model_cycles\": %llu, \"instructions\": %llu, \"blocks\": %llu, "
		"\"wall_seconds\": %.6f, \"host_wait_seconds\": %.6f, \"run_seconds\": %.6f, "
		"\"model_cycles_per_second\": %.0f, \"replayed_accesses\": %llu%s%s, "
		"\"clock\": {\"hclk_hz\": %llu, \"flash_wait_states\": %u, \"prefetch\": %s, "
		"\"icache\": %s, \"dcache\": %s, \"flash_timing\": \"%s\"}, "
		"\"flash\": {\"fetch_current\": %llu, \"fetch_prefetched\": %llu, "
		"\"fetch_cached\": %llu, \"fetch_missed\": %llu, \"load_cached\": %llu, "
		"\"load_missed\": %llu, \"stall_cycles\": %llu}}\n",
		(unsigned long long)m->cycles, (unsigned long long)m->insns,
		(unsigned long long)m->blocks, wall, host_wait, run,
		run > 0 ? (double)m->cycles / run : 0.0, (unsigned long long)m->replayed_accesses,
		taint_line, native_line, (unsigned long long)rcc_hclk(&m->board->rcc), art_wait_states(art),
		art->acr & FLASH_ACR_PRFTEN ? "true" : "false",
		art->acr & FLASH_ACR_ICEN ? "true" : "false",
		art->acr & FLASH_ACR_DCEN ? "true" : "false",
		m->flash_free ? "free" : "modelled",
		(unsigned long long)c->fetch_current, (unsigned long long)c->fetch_prefetched,
		(unsigned long long)c->fetch_cached, (unsigned long long)c->fetch_missed,
		(unsigned long long)c->load_cached, (unsigned long long)c->load_missed,
		(unsigned long long)c->stall_cycles);
	return fclose(f) == 0 ? 0 : -1;
}

/* --profile-calls NAME[,NAME...] */
static int profile_track_list(struct profile *prof, const char *list)
{
	char names[1024];
	snprintf(names, sizeof names, "%s", list);
	for (char *save, *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save))
		if (profile_track_calls(prof, name))
			return -1;
	return 0;
}

/* --uid: 24 hex digits, the highest word (word 2) first, as the firmware prints it. */
static int parse_unique_id(const char *text, uint32_t words[3])
{
	if (strlen(text) != 24 || strspn(text, "0123456789abcdefABCDEF") != 24)
		return -1;
	for (int word = 0; word < 3; word++) {
		char digits[9];
		memcpy(digits, text + 8 * (2 - word), 8);
		digits[8] = '\0';
		words[word] = (uint32_t)strtoul(digits, NULL, 16);
	}
	return 0;
}

/* --taint-public-argument NAME:INDEX:BYTES (an argument register r0..r3, BYTES > 0) */
static int taint_argument_option(struct taint *t, const char *spec)
{
	char name[256];
	unsigned index;
	unsigned long bytes;
	char *end;
	const char *last = strrchr(spec, ':');
	const char *colon = last && last > spec ? memrchr(spec, ':', (size_t)(last - spec)) : NULL;
	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof name)
		goto bad;
	memcpy(name, spec, (size_t)(colon - spec));
	name[colon - spec] = 0;
	index = (unsigned)strtoul(colon + 1, &end, 10);
	if (end != last || end == colon + 1 || index > 3)
		goto bad;
	bytes = strtoul(last + 1, &end, 0);
	if (*end || end == last + 1 || !bytes || bytes > UINT32_MAX)
		goto bad;
	return taint_public_argument(t, name, index, (uint32_t)bytes);
bad:
	fprintf(stderr, "vboard: error: --taint-public-argument '%s': want NAME:INDEX:BYTES with "
			"INDEX 0..3 (r0..r3) and BYTES > 0\n", spec);
	return -1;
}

/* --taint-public-within NAME[@LO-HI[,LO-HI]...] (hex code ranges of the call sites, HI exclusive) */
static int taint_within_option(struct taint *t, const char *spec)
{
	char name[256];
	uint32_t sites[8][2];
	unsigned nsites = 0;
	const char *at = strchr(spec, '@');
	size_t length = at ? (size_t)(at - spec) : strlen(spec);
	if (!length || length >= sizeof name)
		goto bad;
	memcpy(name, spec, length);
	name[length] = 0;
	for (const char *p = at; p && *p; nsites++) {
		char *end;
		if (nsites == sizeof sites / sizeof sites[0])
			goto bad;
		unsigned long lo = strtoul(p + 1, &end, 16);
		if (end == p + 1 || *end != '-')
			goto bad;
		const char *from = end + 1;
		unsigned long hi = strtoul(from, &end, 16);
		if (end == from || (*end && *end != ',') || hi <= lo || hi > UINT32_MAX)
			goto bad;
		sites[nsites][0] = (uint32_t)lo;
		sites[nsites][1] = (uint32_t)hi;
		p = end;
	}
	return taint_public_within(t, name, (const uint32_t (*)[2])sites, nsites);
bad:
	fprintf(stderr, "vboard: error: --taint-public-within '%s': want NAME or NAME@LO-HI[,LO-HI]... "
			"(at most 8 hex code ranges, LO < HI)\n", spec);
	return -1;
}

int main(int argc, char **argv)
{
	const char *elf_path = NULL, *bin_path = NULL, *pty_link = NULL, *stats_path = NULL, *profile_path = NULL;
	const char *calls_list = NULL, *intervals_path = NULL, *interval_function = NULL;
	const char *interval_id_symbol = NULL;
	const char *public_functions[MAX_PUBLIC_FUNCTIONS];
	int npublic = 0;
	const char *taint_path = NULL, *taint_function = NULL, *taint_calls_path = NULL, *taint_id = NULL;
	bool leaf_summaries = true, native_calls = true;
	const char *taint_returns[MAX_TAINT_OPTIONS], *taint_arguments[MAX_TAINT_OPTIONS];
	const char *taint_withins[MAX_TAINT_OPTIONS];
	const char *taint_secret_bytes[MAX_TAINT_OPTIONS];
	int nreturns = 0, narguments = 0, nsecret_bytes = 0, nwithins = 0;
	enum uart_mode mode = UART_STDIO;
	uint64_t max_cycles = UINT64_MAX;
	uint32_t unique_id[3] = {0, 0, 0};
	bool flash_free = false, hse_absent = false, watch_guards = false;
	uint32_t cycle_jitter = 0;
	const struct chip *chip = &chip_stm32f407;

	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
			usage();
			return 0;
		}
		if (!strcmp(opt, "--watch-guards")) {
			/* every store slower (unicorn's memory hook): the host replays a sample with it */
			watch_guards = true;
			continue;
		}
		if (!val) {
			usage();
			return 2;
		}
		i++;
		if (!strcmp(opt, "--elf")) {
			elf_path = val;
		} else if (!strcmp(opt, "--bin")) {
			bin_path = val;
		} else if (!strcmp(opt, "--chip")) {
			chip = chip_named(val);
			if (!chip) {
				fprintf(stderr, "vboard: error: --chip '%s': the emulated chips are stm32f407 "
						"(the Discovery's) and stm32l4r5 (the Nucleo-L4R5ZI's)\n", val);
				return 2;
			}
		} else if (!strcmp(opt, "--uart")) {
			if (!strcmp(val, "stdio"))
				mode = UART_STDIO;
			else if (!strcmp(val, "pty"))
				mode = UART_PTY;
			else {
				usage();
				return 2;
			}
		} else if (!strcmp(opt, "--pty-link")) {
			pty_link = val;
		} else if (!strcmp(opt, "--uid")) {
			if (parse_unique_id(val, unique_id)) {
				usage();
				return 2;
			}
		} else if (!strcmp(opt, "--max-cycles")) {
			char *end;
			max_cycles = strtoull(val, &end, 0);
			if (*end || !max_cycles) {
				usage();
				return 2;
			}
		} else if (!strcmp(opt, "--flash-timing")) {
			if (strcmp(val, "modelled") && strcmp(val, "free")) {
				usage();
				return 2;
			}
			flash_free = !strcmp(val, "free");
		} else if (!strcmp(opt, "--taint-leaf-summaries")) {
			if (strcmp(val, "on") && strcmp(val, "off")) {
				usage();
				return 2;
			}
			leaf_summaries = !strcmp(val, "on");
		} else if (!strcmp(opt, "--native-calls")) {
			if (strcmp(val, "on") && strcmp(val, "off")) {
				usage();
				return 2;
			}
			native_calls = !strcmp(val, "on");
		} else if (!strcmp(opt, "--hse")) {
			if (strcmp(val, "present") && strcmp(val, "absent")) {
				usage();
				return 2;
			}
			hse_absent = !strcmp(val, "absent");
		} else if (!strcmp(opt, "--cycle-jitter")) {
			char *end;
			unsigned long jitter = strtoul(val, &end, 0);
			if (*end || *val == '-' || jitter > UINT32_MAX / 2) {
				usage();
				return 2;
			}
			cycle_jitter = (uint32_t)jitter;
		} else if (!strcmp(opt, "--stats")) {
			stats_path = val;
		} else if (!strcmp(opt, "--profile")) {
			profile_path = val;
		} else if (!strcmp(opt, "--profile-calls")) {
			calls_list = val;
		} else if (!strcmp(opt, "--intervals")) {
			intervals_path = val;
		} else if (!strcmp(opt, "--interval-function")) {
			interval_function = val;
		} else if (!strcmp(opt, "--interval-id-symbol")) {
			interval_id_symbol = val;
		} else if (!strcmp(opt, "--public-function")) {
			if (npublic == MAX_PUBLIC_FUNCTIONS) {
				usage();
				return 2;
			}
			public_functions[npublic++] = val;
		} else if (!strcmp(opt, "--taint")) {
			taint_path = val;
		} else if (!strcmp(opt, "--taint-function")) {
			taint_function = val;
		} else if (!strcmp(opt, "--taint-calls")) {
			taint_calls_path = val;
		} else if (!strcmp(opt, "--taint-id-symbol")) {
			taint_id = val;
		} else if (!strcmp(opt, "--taint-public-return")) {
			if (nreturns == MAX_TAINT_OPTIONS) {
				usage();
				return 2;
			}
			taint_returns[nreturns++] = val;
		} else if (!strcmp(opt, "--taint-public-within")) {
			if (nwithins == MAX_TAINT_OPTIONS) {
				usage();
				return 2;
			}
			taint_withins[nwithins++] = val;
		} else if (!strcmp(opt, "--taint-public-argument")) {
			if (narguments == MAX_TAINT_OPTIONS) {
				usage();
				return 2;
			}
			taint_arguments[narguments++] = val;
		} else if (!strcmp(opt, "--taint-public-secret-bytes")) {
			if (nsecret_bytes == MAX_TAINT_OPTIONS) {
				usage();
				return 2;
			}
			taint_secret_bytes[nsecret_bytes++] = val;
		} else {
			usage();
			return 2;
		}
	}
	/* A raw image has no symbols for the profiler or the taint tracker to name functions by. */
	bool needs_symbols = profile_path || intervals_path || taint_path;
	if (!elf_path == !bin_path || (bin_path && needs_symbols) || (calls_list && !profile_path) || (!intervals_path != !interval_function) ||
	    ((npublic || interval_id_symbol) && !intervals_path) || (!taint_path != !taint_function) ||
	    ((nreturns || narguments || nsecret_bytes || nwithins || taint_calls_path) && !taint_path) ||
	    (taint_id && !taint_calls_path)) {
		usage();
		return 2;
	}

	struct elf_image elf;
	if (elf_path ? elf_load(elf_path, &elf) : elf_load_raw(bin_path, FLASH_BASE, &elf))
		return 1;
	struct profile *prof = profile_path || intervals_path ? profile_new(&elf) : NULL;
	if (calls_list && profile_track_list(prof, calls_list))
		return 1;
	if (intervals_path && profile_intervals(prof, interval_function, intervals_path))
		return 1;
	if (interval_id_symbol && profile_interval_id_symbol(prof, interval_id_symbol))
		return 1;
	for (int i = 0; i < npublic; i++)
		if (profile_public_function(prof, public_functions[i]))
			return 1;
	struct taint *taint = taint_path ? taint_new(&elf, chip) : NULL;
	if (taint_path && (!taint || taint_scope_function(taint, taint_function)))
		return 1;
	if (taint_calls_path && taint_calls(taint, taint_calls_path))
		return 1;
	if (taint)
		taint_leaf_summaries(taint, leaf_summaries);
	if (taint_id && taint_id_symbol(taint, taint_id))
		return 1;
	for (int i = 0; i < nreturns; i++)
		if (taint_public_return(taint, taint_returns[i]))
			return 1;
	for (int i = 0; i < nwithins; i++)
		if (taint_within_option(taint, taint_withins[i]))
			return 1;
	for (int i = 0; i < narguments; i++)
		if (taint_argument_option(taint, taint_arguments[i]))
			return 1;
	for (int i = 0; i < nsecret_bytes; i++)
		if (taint_secret_bytes_option(taint, taint_secret_bytes[i]))
			return 1;

	/* Last: its path tells the host the board is up, so every option is checked before it. */
	struct uart_host uart;
	if (uart_open(&uart, mode, pty_link))
		return 1;

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	int rc = 1;
	double t0 = monotonic_seconds();
	if (machine_init(&machine, &elf, &uart, chip, max_cycles, prof, taint) == 0 &&
	    machine_set_unique_id(&machine, unique_id) == 0 &&
	    (!watch_guards || machine_watch_guards(&machine) == 0) &&
	    /* the guard watch sees the implementation's stores: all of them emulated */
	    (!native_calls || watch_guards || machine_native_calls(&machine) == 0)) {
		machine_set_board_timing(&machine, flash_free, cycle_jitter);
		if (hse_absent)
			machine_remove_hse(&machine);
		rc = machine_run(&machine);
	}
	double wall = monotonic_seconds() - t0;
	if (rc == 0 && mode == UART_PTY && !machine.signal)
		uart_hold(&uart, &machine.signal); /* the host stops it (SIGTERM) once it has read all */

	if (stats_path && write_stats(stats_path, &machine, wall, uart.host_wait_seconds) && rc == 0)
		rc = 1;
	if (profile_path && profile_write(prof, profile_path, machine.cycles) && rc == 0)
		rc = 1;
	if (taint_path && taint_write(taint, taint_path) && rc == 0)
		rc = 1;
	uart_close(&uart);
	machine_free(&machine);
	profile_free(prof);
	taint_free(taint);
	elf_free(&elf);
	return rc;
}
