/* The emulated Cortex-M4 core of the virtual board: Unicorn set-up, memory, run loop,
 * the SysTick exception, and the per-block cycle accounting (machine_internal.h lists the files
 * that make it up). */
#ifndef VBOARD_MACHINE_H
#define VBOARD_MACHINE_H

#include <stdbool.h>
#include <stdint.h>
#include <unicorn/unicorn.h>

#include "board.h"
#include "elf.h"
#include "memmap.h"
#include "timing.h"
#include "uart.h"

enum stop_reason {
	STOP_NONE,
	STOP_FAIL,          /* fail_msg says what; the run loop adds the PC */
	STOP_EXACT_ACCESS,  /* a time-dependent register was accessed: find the instruction */
	STOP_EVENT,         /* at a block start: exception to take, cycle limit, signal */
	STOP_RETRANSLATE,   /* a block has divisions that need their operand hooks first */
	STOP_FLASH_TIMING,  /* flash wait states were switched on: hook the loads that can read flash */
	STOP_TAINT_HOOKS,   /* at a block start: the taint tracker's code hook covers other code now */
	STOP_HALT,
	STOP_INPUT_EOF,
};

struct cost_entry {
	uint32_t addr, size, cycles, ninsns;
	uint32_t exit_refill; /* refill charged if control leaves the block by a taken branch */
	uint32_t entry_refill; /* and more if a taken branch lands here */
	struct entry_dependence entry; /* and what falling through into it costs */
	struct pipe_state exit;
	uint32_t fetch_first, nfetches; /* its flash lines in machine.fetch_pool */
};
#define COST_CACHE_BITS 16

/* A block's data-accessing instructions in order, to tell which one made a time-dependent
 * access without stopping there; cached by block like the costs. */
#define ACCESS_SITES_MAX 32
struct access_site {
	struct access_span span;
	uint32_t suffix;   /* static cost from this instruction to the end of the block */
};
struct access_map {
	uint32_t addr, size;
	bool it_mem;       /* the block has IT-conditional loads/stores */
	uint32_t nsites;   /* ACCESS_SITES_MAX + 1: too many to keep */
	struct access_site site[ACCESS_SITES_MAX];
};
#define ACCESS_CACHE_BITS 8

struct div_hook;
struct guard_watch;
struct natives;
struct profile;
struct taint;

struct machine {
	/* hot: read and written for every block */
	uint64_t cycles;       /* model time at the end of the current block */
	uint64_t next_event;   /* the block hook takes its slow path once cycles reach this */
	uint32_t cur_addr, cur_size;
	uint32_t cur_exit_refill;  /* of the block that ran last */
	struct pipe_state cur_exit;  /* what it left in the pipeline (nothing after a jump in time) */
	uint64_t blocks, insns;
	struct cost_entry *cache;
	bool flash_timed;      /* flash wait states > 0: fetches and loads go through the ART model */
	bool flash_free;       /* --flash-timing free: flash costs nothing whatever FLASH_ACR says */
	bool native_recording; /* a call that native_calls.c learns from is running: every block is seen */

	uc_engine *uc;
	csh cs;
	struct block_timing *bt;      /* scratch analysis for the slow paths */
	struct elf_image *elf;
	uint8_t *flash;
	uint64_t max_cycles;
	bool cycle_limit;             /* the run stopped at max_cycles */
	volatile int signal;          /* SIGINT/SIGTERM received */

	enum stop_reason stop;
	char fail_msg[512];

	/* exact access to a time-dependent register: replay the instruction at a known time */
	bool armed;
	uint32_t armed_pc;
	uint64_t armed_time;
	bool resume;                  /* next block starts mid-block at armed_pc */
	struct pipe_state resume_state;
	uint64_t resumed_block;       /* value of `blocks` while that resumed block runs */
	uint64_t replayed_accesses;   /* accesses timed so, not in place (--stats) */
	/* ... or found in place: the peripheral access in progress, and the last access site
	 * found to have made a time-dependent access in the block now running */
	uint32_t access_addr, access_size;
	bool access_write;
	uint64_t found_block;         /* value of `blocks` then; found_site is stale otherwise */
	int found_site;
	struct access_map *access_cache;
	struct access_map resumed_map; /* a resumed block's: its costs depend on how it resumed */

	bool in_handler;              /* inside the SysTick handler */
	uint32_t exc_return;

	struct div_hook **divs;
	uint32_t ndivs, cap_divs;
	struct block_timing *pending_divs; /* block whose divisions need hooks */

	/* flash timing (flash_art.h): the lines each cached block fetches; the code hook on flash
	 * and, per flash halfword, the load there (index + 1 into load_spans, 0: none) */
	struct art *art;
	struct fetch_point *fetch_pool;
	uint32_t fetch_used;
	bool flash_hooked;
	uint32_t flash_mask;          /* flash size - 1 */
	uint32_t *load_at;
	uint8_t *load_bits;           /* bit per flash halfword: load_at is set there */
	struct access_span *load_spans;
	uint32_t nload_spans, cap_load_spans;

	struct board *board;
	struct uart_host *uart;
	struct profile *prof;
	struct taint *taint;          /* --taint: a code hook on every instruction, else NULL */
	uc_hook taint_hooks[65];      /* ... on taint_hooked_ranges(): all but the sealed leaves' code */
	unsigned ntaint_hooks;
	struct natives *natives;      /* native_calls.c, NULL without --native-calls on */
	struct guard_watch *guards;   /* the harness's guarded memory, NULL in an image without it */
	/* the devices' windows as Unicorn maps them: each access carries its window */
	struct mmio_window {
		struct machine *m;
		uint32_t base;
	} mmio[BOARD_WINDOWS];
	const struct chip *chip;
	uint8_t *sram, *ccm;          /* the chip's SRAM; the memory at CCM_BASE (SRAM2 inside it: the L4R5) */
};

int machine_init(struct machine *m, struct elf_image *elf, struct uart_host *uart,
		 const struct chip *chip, uint64_t max_cycles, struct profile *prof, struct taint *taint);
/* Sets the device's unique ID, words 0..2 at the chip's unique_id_base (all zero unless set). */
int machine_set_unique_id(struct machine *m, const uint32_t words[3]);
/* The pricing of a board the model is not: flash that costs nothing at any wait states (the 24 MHz
 * model of an image built for 168 MHz), and up to `jitter` cycles of noise on every read of a cycle counter. */
void machine_set_board_timing(struct machine *m, bool flash_free, uint32_t jitter);
/* Stops the board at a store by the implementation into the harness's guarded memory
 * (guard_watch.c); an image without the harness has none. */
int machine_watch_guards(struct machine *m);
/* Runs the calls of the Keccak-f[1600] permutation on the host once learnt (native_calls.c):
 * after machine_init, so that its hooks run after every other block hook. */
int machine_native_calls(struct machine *m);
/* The stats file's "native_calls" member (a leading comma, then the member). */
void native_calls_stats(const struct machine *m, char *out, size_t len);
/* The board's HSE never starts (the firmware must boot on its HSI). */
void machine_remove_hse(struct machine *m);
/* Runs until halt, error, end of input or signal. Returns the process exit code. */
/* The run's exit status when it stopped at its budget of cycles (--max-cycles), apart from the
 * other errors' 1: the host tells a build that does not finish in time from one that fails. */
#define MACHINE_EXIT_CYCLE_LIMIT 3
int machine_run(struct machine *m);
void machine_free(struct machine *m);

#endif
