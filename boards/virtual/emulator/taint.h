/* Exact secret-taint tracking (--taint): which executed instructions have a timing on the
 * Cortex-M4 that can depend on a secret. Pure like timing.c: the core reaches it through
 * `struct taint_core` (analysis_hooks.c implements it, taint_test.c fakes it), and instructions
 * are decoded with capstone once per address.
 *
 * Taint values are 2 bits, OR-combined: TAINT_SECRET (1) and TAINT_DECLASSIFIED (2), a secret
 * that the firmware or the command line declared public (it is published, e.g. part of the
 * signature, or the scheme decides on it in the open, e.g. a rejection).
 *
 * State: one taint per core register r0-r12, SP, LR; one per APSR condition flag N, Z, C, V (so
 * that a flag an instruction does not write keeps its own taint, and a condition reads only its
 * flags: after a CMP on a secret, LSLS on a public register rewrites N, Z and C, and a BEQ is
 * public though V is still secret); one for the APSR Q bit and one for the four GE bits (kept
 * apart from NZCV so that a CMP, which rewrites NZCV, does not forget a secret GE that a later
 * SEL reads, and apart from each other because UADD8 and the like write all of GE while Q is
 * sticky: a GE set from constants, as SHA-3 code does before its SELs, is public); one per
 * FP single register s0-s31 (d<n> is s<2n> and s<2n+1>); one for the FPSCR flags (NZCV
 * together); one per byte of SRAM (0x20000000, 128 KiB) and CCM (0x10000000, 64 KiB). Flash,
 * peripherals and PC are never tainted.
 *
 * Propagation, before each executed instruction (Unicorn does not run the code hook of an
 * IT-block instruction whose condition fails: it did not execute):
 * - data processing: every register written = OR of the registers read, with the flags among
 *   them that the instruction reads: C for ADC, SBC, RRX and an RRX-shifted operand; GE for SEL;
 *   N Z C V Q GE for MRS APSR; the flags of its condition for an instruction made conditional by
 *   an IT block. Flag-setting instructions set each flag the ARMv7-M ARM says they set to that
 *   same OR, and a flag they do not set keeps its taint: ADDS, ADCS, SUBS, SBCS, RSBS, NEGS,
 *   CMP, CMN: N Z C V; ANDS, ORRS, ORNS, EORS, BICS, MOVS, MVNS, TST, TEQ: N Z, and C when their
 *   operand is shifted (by a non-zero amount, or RRX) or is a modified immediate whose encoding
 *   rotates (i:imm3 >= 4); LSLS, LSRS, ASRS, RORS: N Z, and C by a non-zero immediate amount,
 *   or ORed into C by a register amount (which may be 0); RRXS: N Z C; MULS: N Z; MSR APSR_nzcvq
 *   (and _nzcvqg): N Z C V and Q from the source, _g and _nzcvqg: GE; the parallel additions and
 *   subtractions (UADD8, SSUB16...) set GE, the saturating and DSP ones ORed into Q; VMRS APSR_nzcv, FPSCR: N Z C V from
 *   the FPSCR flags. An instruction with S that the tracker does not know ORs into all four.
 *   For the 32-bit data-processing encodings the S bit decides whether flags are written.
 *   Zeroing idioms are untainted: EOR/SUB/BIC Rd, Rn, Rn (SBC Rd, Rn, Rn depends on the carry
 *   only) and MOV Rd, #imm.
 * - loads: each destination register = OR of its loaded bytes' shadow and the taint of the
 *   address registers; stores: each stored byte's shadow = the source register's taint OR the
 *   address registers'. LDM/STM/PUSH/POP, LDRD/STRD, VLDM/VSTM/VPUSH/VPOP, VLDR/VSTR move each
 *   register at its own address, so a PUSH of a secret register taints only its own slot.
 * - VMOV core<->FP registers pairwise; VCMP writes the FPSCR flags; VMRS APSR_nzcv, FPSCR moves
 *   them to the APSR flags; VMSR/VMRS FPSCR move them from/to a core register.
 * - conditions read only their flags: EQ/NE Z; CS/CC C; MI/PL N; VS/VC V; HI/LS C Z; GE/LT N V;
 *   GT/LE Z N V; AL none. This holds for B<cc> and for IT, whose firstcond stands for its whole
 *   block (a member's condition is firstcond or its inverse, which reads the same flags).
 * - IT: the registers (and flags) that the block's instructions write get the taint of its
 *   condition's flags ORed in, because a skipped instruction leaves its destination depending on
 *   them too; an executed IT-conditional instruction reads them (a select). Except a conditional
 *   return or jump (POPHI {r4, r5, pc}, LDREQ PC): that is control flow, reported at the IT
 *   instruction, and the registers it restores do not take the flags' taint (else every
 *   callee-saved register of a variable-time routine with conditional returns, as libgcc's soft
 *   double, would).
 *
 * Precision and what over-approximates: a register is tainted as a whole (a byte of secret in
 * r0 taints all of r0, and `and r0, r1, #0` stays tainted); a loaded register takes the OR of
 * all its bytes; an instruction writing several registers (UMULL) taints all of them with the
 * OR of its inputs; a flag an instruction writes takes the OR of all its inputs (a rotated
 * immediate's C is a constant, still taken as the OR); the FPSCR flags are one slot, and the
 * four GE bits one slot. What under-approximates (not a finding the check can prove
 * absent): implicit flows, i.e. values that differ because a secret branch went one way (only
 * the branch itself is reported), including memory that an IT-skipped store left unwritten; the
 * FPSCR exception bits (IOC...IXC) and rounding mode; one execution path per call (what the
 * inputs of this run made execute).
 *
 * Findings, recorded while a call of the scope function (--taint-function) is active and the
 * core is not in an exception handler, per (instruction address, kind[, region]):
 * - "branch": B<cc>, CBZ/CBNZ or IT whose condition depends on a tainted value, where the
 *   IT block holds an instruction whose cost differs executed and skipped (a load or store, a
 *   branch, a division, a multi-cycle FP operation);
 * - "select": an IT whose condition depends on a tainted value and whose members are all
 *   single-cycle (a skipped conditional instruction costs one cycle too, timing.c), a constant-time select such
 *   as GCC makes of `-(x >> 31)` masks; a note, not a leak;
 * - "jump": BX/BLX Rm, MOV/ADD PC, LDR PC, POP/LDM with PC, TBB/TBH whose target is tainted;
 * - "division": UDIV/SDIV with a tainted operand (2..12 cycles, operand-dependent);
 * - "address": a load or store (TBB/TBH included) whose address registers are tainted, with
 *   the region the access hit ("sram", "ccm", "flash", "peripheral"): every region is constant
 *   time at 24 MHz, 0 wait states, no cache. In flash whose load time follows the address
 *   (taint_core.flash_load_timed: wait states behind the ART's data cache, at 168 MHz) the
 *   finding is "timed": kept apart from the same instruction's untimed flash findings.
 * Each counts the executions where the deciding value was tainted; it is "declassified" when
 * that value was never SECRET, only DECLASSIFIED.
 *
 * Sources (the firmware's own marks, firmware/include/pqscope/taint.h): at the entry of
 * pqs_taint_secret(p, n) the n bytes at p become SECRET; at the entry of pqs_taint_public(p, n)
 * their SECRET becomes DECLASSIFIED, and with --taint-public-secret-bytes OFFSET:BYTES those bytes
 * of every pqs_taint_secret region become DECLASSIFIED at once. When a call of randombytes(out, n)
 * made inside the scope function returns, the n bytes at out become SECRET (the signing
 * randomness is a secret like the key). --taint-public-return NAME: when a call of NAME returns, r0's
 * SECRET becomes DECLASSIFIED. --taint-public-argument NAME:INDEX:BYTES: at the entry of NAME,
 * BYTES bytes at the pointer in r<INDEX> become DECLASSIFIED. --taint-public-within
 * NAME[@LO-HI,...]: a finding made while a call of NAME is open (its callees included), a
 * computation on values masked by fresh randomness, is kept apart from the same instruction's
 * findings elsewhere, names the innermost such call's function ("within": its entry address), and
 * is declassified; with code ranges (hex, HI exclusive), only calls made from them count. When a call of the scope function
 * returns, all taint is cleared (each call starts clean) and "calls" is incremented.
 * SysTick exceptions: every slot's taint (the four flags, Q and GE each on its own) is saved at
 * entry and restored at return (the stacked frame's shadow is the registers' taint, the xPSR
 * word's the OR of N Z C V Q GE); no finding inside the handler.
 *
 * Output (--taint FILE.json, written when the emulator exits, to FILE.json.tmp then renamed):
 *   {"format": "pqscope-vboard-taint", "version": 1,
 *    "calls": N,          // calls of the scope function that returned
 *    "instructions": N,   // instructions executed inside them (outside exception handlers)
 *    "findings": [{"kind": "address|branch|division|jump|select", "address": "0x0800abcd",
 *                  "count": N, "declassified": false,
 *                  "region": "sram|ccm|flash|peripheral",   // "region": address only
 *                  "timed": true,   // flash whose load time followed the address; else absent
 *                  "within": "0x0800abcd"}],   // inside a --taint-public-within call
 *    "coverage": [N, ...]}  // per returned call, in order: the distinct flash instruction
 *                           // addresses it was the first call to run (their sum: all of them)
 * sorted by address, then kind (by name), then region (flash untimed, then timed); an address
 * finding is one entry per region its instruction touched. */
#ifndef VBOARD_TAINT_H
#define VBOARD_TAINT_H

#include <stdbool.h>
#include <stdint.h>

#define TAINT_SECRET 1u
#define TAINT_DECLASSIFIED 2u

/* Shadow slots (taint_get/taint_set): core registers r0..r14 are slots 0..14. */
enum {
	TAINT_SP = 13,
	TAINT_LR = 14,
	TAINT_APSR_N = 16,   /* the APSR condition flags, one slot each */
	TAINT_APSR_Z = 17,
	TAINT_APSR_C = 18,
	TAINT_APSR_V = 19,
	TAINT_APSR_Q = 20,   /* the sticky saturation bit */
	TAINT_FPSCR = 21,    /* FPSCR NZCV */
	TAINT_APSR_GE = 22,  /* the four GE bits, one slot */
	TAINT_S0 = 32,       /* s0..s31: slots 32..63 */
};

enum taint_kind { TAINT_ADDRESS, TAINT_BRANCH, TAINT_DIVISION, TAINT_JUMP, TAINT_SELECT, TAINT_KINDS };

struct elf_image;
struct taint;

#define TAINT_CORE_XPSR 16 /* taint_core.reg's number of xPSR (a branch's flags) */

/* What the tracker reads from the core (analysis_hooks.c implements it). */
struct taint_core {
	void *core;
	uint32_t (*reg)(void *core, int n);  /* core register r0..r15, or TAINT_CORE_XPSR */
	/* Copies up to `len` bytes of code at `addr` to `buf`; returns how many are readable. */
	uint32_t (*code)(void *core, uint32_t addr, uint8_t *buf, uint32_t len);
	/* Whether a load from flash now waits by its address: flash wait states priced and the ART's
	 * data cache on, so which lines it holds decides the wait (flash_art.h). */
	bool (*flash_load_timed)(void *core);
	/* The 32-bit word at `addr` (any alignment); false where nothing is mapped. NULL: no leaf
	 * summary is keyed on memory. */
	bool (*read_word)(void *core, uint32_t addr, uint32_t *value);
};

/* `elf` may be NULL (unit tests): no functions then, and taint_record() decides recording. The
 * shadow memory is `chip`'s. */
struct chip;
struct taint *taint_new(const struct elf_image *elf, const struct chip *chip);
/* Findings only during calls of function `name` (--taint-function). -1 after an error message. */
int taint_scope_function(struct taint *t, const char *name);
int taint_public_return(struct taint *t, const char *name);
/* `sites`: code ranges [lo, hi) the calls must be made from (nsites 0: every call). */
int taint_public_within(struct taint *t, const char *name, const uint32_t (*sites)[2], unsigned nsites);
int taint_public_argument(struct taint *t, const char *name, unsigned index, uint32_t bytes);
/* --taint-public-secret-bytes OFFSET:BYTES: of every region pqs_taint_secret marks, these bytes
 * are DECLASSIFIED instead (a public part of a secret key, e.g. ML-DSA's rho). */
int taint_public_secret_bytes(struct taint *t, uint32_t offset, uint32_t bytes);
/* Once the core is set up; finds the firmware's pqs_taint_secret/pqs_taint_public if present. */
int taint_attach(struct taint *t, const struct taint_core *core);

/* Control reached the start of a block at `addr`: calls, returns, marks. */
void taint_block(struct taint *t, uint32_t addr);
/* The instruction at `addr` is about to execute. False if it cannot be decoded (the timing
 * model rejects such a block first, so this does not happen with a priced block). */
bool taint_insn(struct taint *t, uint32_t addr);
/* Leaf calls (a speed-up that changes no result): a call of a function that calls nothing, or only
 * functions that call nothing, is tracked once and summarised; a later call whose inputs are the
 * same is not tracked, its summary is applied when it returns. Its inputs are SP, LR, every slot's
 * taint, the taint of every byte the call read before writing it, and the values of those of r0-r3
 * that decided its path or its addresses. While a call is recorded, its inputs are labelled (the
 * shadow's upper bits): it is summarised only if it made no finding, ran only its function's code
 * and that of functions it called which call nothing (none of them watched), read no peripheral
 * nor state no slot holds, and no value from memory or from a slot other than r0-r3, SP and LR
 * decided a branch, an address, a jump or a division: then a call with the same inputs runs the
 * same instructions at the same addresses with the same taints. A function whose
 * calls hit TAINT_SEAL_STREAK times in a row, however short they are, leaves the code hook
 * (taint_hooked_ranges): its replayed calls cost what untracked code costs; taint_gate() brings it
 * back before a call it cannot replay. A summary lists the functions its call called in long
 * calls (16 instructions or more), tail calls included (the first six), and its replays take them
 * out of the code hook too:
 * SPHINCS+-SHA2's sha256_inc_finalize replays with the compression it calls. An exception during
 * a recording ends it unsummarised (and one that could not be summarised anyway fails as at its
 * return); during a replay, its frame's bytes take the OR of every taint the call touched. On by
 * default. */
#define TAINT_SEAL_STREAK 8
/* Summaries kept per function (its call sites and taint patterns: slhdsa-c calls memcpy from
 * dozens of places with a few hundred address pairs), replaced in turn. */
#define TAINT_LEAF_SUMMARIES 256
/* Recordings of a function none of whose calls replayed after which it is left alone (its inputs
 * rarely repeat), and those after which one that ever made no summary is (taint.c). */
#define TAINT_LEAF_RECORDINGS 64
void taint_leaf_summaries(struct taint *t, bool on);
/* Control reaches the block at `addr`, before anything else of it runs (before it is priced):
 * whether the code hook's ranges must change first. Then the caller stops before the block,
 * hooks taint_insn on taint_hooked_ranges() only, drops the translated code of
 * taint_changed_code(), and runs it again. */
bool taint_gate(struct taint *t, uint32_t addr);
/* The code [lo, hi) whose hooking changed since the last call, if that is not all of it (then all
 * translated code must go). A function's code is dropped alone: SPHINCS+ and SLH-DSA seal and
 * unseal memcpy thousands of times, and each flush of everything retranslated the signing. */
bool taint_changed_code(struct taint *t, uint32_t *lo, uint32_t *hi);
/* The ranges [lo, hi] (inclusive) whose instructions need taint_insn: at most 65; none while the
 * tracker is idle (nothing tainted, no checked call open), until a block that can begin one or
 * mark a secret. */
unsigned taint_hooked_ranges(const struct taint *t, uint32_t (*ranges)[2]);
/* Whether the instructions now beginning are none of the tracker's business: it is idle, or a leaf
 * call whose summary it applies at the return is open (native_calls.c runs such a call on the host). */
bool taint_call_untracked(const struct taint *t);
void taint_leaf_counts(const struct taint *t, uint64_t *recorded, uint64_t *replayed, uint64_t *rehooks);
/* SysTick exception entry with its frame at `frame` (extended FP frame if `fp`), and return. */
void taint_exception_entry(struct taint *t, uint32_t frame, bool fp);
void taint_exception_return(struct taint *t);

/* --taint-calls FILE.jsonl: when a call of the scope function returns, appends and flushes one
 * line: {"call": N, "sample_id": N, "instructions": N, "findings": [as below, counted in this
 * call], "covered": [the flash instruction addresses this call ran first in this run]}; a killed
 * run keeps each call before it. Each finding of a line also says what its executions in this
 * call did, so that the host can tell whether another secret changes it (issue #54): its outcome
 * per execution is a branch's or a select's direction (1 taken / condition true, 0 not), an
 * address finding's effective address, a division's operand-dependent cycles (timing_div), a
 * jump's target (the next block); "outcome_digest": 16 hex digits, FNV-1a 64 of the call's
 * outcomes in order, each as 4 little-endian bytes; "outcomes": their first TAINT_OUTCOME_RUNS
 * runs, [value, repeat] each (a loop's exit branch is [[1, 31], [0, 1]]): where two calls first
 * differ, when it is within them. Runs that add up to fewer than "count" were cut there. */
#define TAINT_OUTCOME_RUNS 16
/* --taint-id-symbol NAME: "sample_id" is the 32-bit word NAME holds when the call begins (0
 * without). Each -1 after an error message. */
int taint_calls(struct taint *t, const char *path);
int taint_id_symbol(struct taint *t, const char *name);
/* Writes the findings (format above). -1 after an error message. */
int taint_write(const struct taint *t, const char *path);
/* Instructions executed inside calls of the scope function (outside handlers). */
uint64_t taint_instructions(const struct taint *t);
void taint_free(struct taint *t);

/* Direct access, for the tests. */
uint8_t taint_get(const struct taint *t, int slot);
void taint_set(struct taint *t, int slot, uint8_t value);
uint8_t taint_memory(const struct taint *t, uint32_t addr);
/* ORs `value` into n bytes' shadow (TAINT_SECRET: as pqs_taint_secret), or declassifies them
 * (value 0: as pqs_taint_public). */
void taint_mark(struct taint *t, uint32_t addr, uint32_t n, uint8_t value);
void taint_record(struct taint *t, bool on);
/* Executions recorded for (addr, kind); *declassified tells whether none was SECRET. For
 * TAINT_ADDRESS, summed over regions. */
uint64_t taint_finding(const struct taint *t, uint32_t addr, enum taint_kind kind,
		       bool *declassified);
/* Of those, for TAINT_BRANCH: the executions that went the taken way. */
uint64_t taint_branch_taken(const struct taint *t, uint32_t addr);

#endif
