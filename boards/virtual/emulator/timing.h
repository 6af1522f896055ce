/* Cortex-M4 cycle cost model: decodes a translated block once and prices every instruction
 * from the Cortex-M4 TRM (ARM DDI 0439, chapter 3 "Instruction timings", FPU chapter).
 * Pure functions over byte sequences: no emulator state, so they are unit-testable. */
#ifndef VBOARD_TIMING_H
#define VBOARD_TIMING_H

#include <stdbool.h>
#include <stdint.h>
#include <capstone/capstone.h>

/* Pipeline refill P of a taken branch (TRM table 3-1: 1..3 "depending on the alignment and
 * width of the target instruction, and whether the processor manages to speculate the address
 * early"). Early means in decode: the Cortex-M3 TRM (r2p0, table 15-3 "Branches and stages
 * evaluated by the processor"; the M4 has the M3's pipeline) issues the target of B, BL, BX LR,
 * BLX LR and MOV PC,LR in decode, unless LR is being written then, and that of CBZ/CBNZ, BX/BLX
 * with another register, ADD/MOV PC and ISB in execute: P = 1 and 2. Measured on an STM32F4
 * (compendium.i-0.nl "Branch timing", "Function calls"): a taken loop branch takes 2 cycles, a
 * call and return 4. A target loaded from memory (LDR PC, POP/LDM with PC) or a table branch:
 * TRM 3.3.2 gives "three cycles for the pipeline reload". */
#define TIMING_REFILL_DECODE 1
#define TIMING_REFILL_EXECUTE 2
#define TIMING_REFILL_UNPREDICTED 3
/* Instruction alignment. TRM table 3-1: P is "up to 1 cycle longer when branching to unaligned
 * 32-bit instructions" (taken here for every branch, a loaded target too); measured on an STM32
 * Cortex-M4 with code in flash (compendium.i-0.nl "Alignment rules"): a taken branch to a 32-bit
 * instruction at a halfword address costs 1 more. The same page measured a run of 3 or more
 * 32-bit instructions at halfword addresses 1 cycle more; it is not priced: pqm4's Discovery
 * measurements of code built the same way (Falcon signing, Dilithium's m4f rows) come out within
 * 0.5 % without it and 1.2 to 2.8 % over with it (README, "How close"). */
#define TIMING_UNALIGNED_TARGET 1
/* Loads after a store, measured on an STM32F4 Cortex-M4 at 24 MHz (compendium.i-0.nl, "Store
 * placement" and "Load literal"): "the worst place for a store is before a load", and a store then
 * a literal load (LDR [PC,#imm]) take 5 cycles. TRM 3.3.2: a store's data phase overlaps the next
 * instruction, which waits for it if it needs the bus. A load right after a store costs
 * TIMING_STORE_THEN_LOAD more; a literal load TIMING_STORE_THEN_LITERAL (the measured pair: the
 * store 1, the load 2, 2 more: the wait and the TRM's "contention with the fetch unit"). Alone, a
 * literal load costs what any load costs ("both solutions taking two cycles", against MOVW/MOVT),
 * and "load literal only pipelines with another load literal". */
/* An IT instruction right after a 16-bit instruction is folded into it and costs nothing
 * (compendium.i-0.nl "Conditional block", measured: MOVS; IT MI; RSBMI take 2 cycles with the
 * DWT's FOLDCNT at 1, and 3 with a 32-bit instruction before the IT). */
#define TIMING_STORE_THEN_LOAD 1
#define TIMING_STORE_THEN_LITERAL 2
/* Exception entry and return (TRM "Exception model": 12-cycle entry, 10-cycle return). */
#define TIMING_EXC_ENTRY 12
#define TIMING_EXC_RETURN 10
/* UDIV/SDIV base cost charged statically; the operand-dependent rest comes from timing_div(). */
#define TIMING_DIV_BASE 2

/* Largest block we price: QEMU ends a translation block after 512 instructions. */
#define TIMING_MAX_INSNS 600
#define TIMING_MAX_DIVS 16

/* What the previous instruction leaves behind that the next load/store can pipeline with. */
struct pipe_state {
	bool after_load;     /* previous instruction was a single LDR-class access (not a literal) */
	uint16_t load_dests; /* registers it loaded (bit n = Rn): an address using them stalls */
	uint16_t alu_dests;  /* core registers the previous data-processing instruction wrote */
	bool after_literal;  /* previous instruction was a literal load (LDR [PC,#imm]) */
	bool after_store;    /* previous instruction stored: a load now waits for its data phase */
	bool after_narrow;   /* previous instruction was 16-bit: an IT now folds into it */
};

/* How a block's first instruction's cost depends on the pipeline state it starts with (the
 * block is priced as if after a branch: nothing to pipeline with). */
struct entry_dependence {
	uint16_t addr_regs;  /* registers its address uses (it accesses memory) */
	bool access;         /* a load or store: stalls on an address from the ALU */
	bool pipelines;      /* a load/store that costs 1 less right after a load */
	bool literal;        /* a literal load: pipelines after a literal load instead */
	bool load;           /* reads data memory: waits after a store */
	bool it;             /* an IT: free after a 16-bit instruction */
};

struct div_site {
	uint32_t addr;
	uint8_t rn, rm;    /* dividend, divisor register numbers */
	uint8_t cond;      /* arm_cc; ARM_CC_AL if unconditional */
	bool is_signed;
};

/* Where an instruction's data access lies, as a function of the registers before it executes:
 * [base + (index << shift) + offset, ... + bytes). The core uses it to tell which instruction of
 * a block made a given access without stopping there. */
enum access_dir { ACCESS_NONE, ACCESS_LOAD, ACCESS_STORE, ACCESS_UNKNOWN /* may be anywhere */ };
struct access_span {
	uint8_t dir;          /* enum access_dir */
	bool single;          /* exactly one access (LDR/STR class) */
	int8_t base, index;   /* core register numbers, -1 for none (a literal's address is offset) */
	uint8_t shift;
	int32_t offset;
	uint32_t bytes;       /* covers every access the instruction can make */
};

struct insn_cost {
	uint32_t addr;
	uint16_t size;
	uint16_t cycles;
	struct pipe_state before; /* pipeline state this instruction was priced with */
	bool mem;                 /* accesses data memory */
	struct access_span access;
	bool in_it;               /* conditional through an IT block */
};

/* The core starts executing from a new 16-byte line (the flash's read unit) `offset` cycles of
 * static cost after the block starts. */
#define TIMING_LINE_BYTES 16u
struct fetch_point {
	uint32_t line;     /* address / TIMING_LINE_BYTES */
	uint32_t offset;
};

struct block_timing {
	uint32_t addr, size;
	uint32_t cycles;   /* static cost of the whole block */
	uint32_t exit_refill; /* refill if the block is left by a taken branch (its last insn) */
	uint32_t entry_refill; /* refill cycles more when a taken branch lands on the block */
	struct entry_dependence entry; /* its first instruction */
	struct pipe_state exit;        /* what its last instruction leaves behind */
	uint32_t ninsns;
	bool halts;        /* block starts with "b ." : the firmware's final idle loop */
	bool uses_fp;      /* contains FPv4 instructions (needs CPACR CP10/CP11) */
	bool it_mem;       /* has a load/store made conditional by an IT block */
	uint32_t ndivs;
	struct div_site divs[TIMING_MAX_DIVS];
	struct insn_cost insn[TIMING_MAX_INSNS];
	uint32_t nfetches;
	struct fetch_point fetch[2 * TIMING_MAX_INSNS]; /* each line the block runs into, in order */
	char error[256];   /* set when the block cannot be priced */
};

/* Opens a capstone handle for Thumb-2/M-class with details on. Returns false on failure. */
bool timing_open(csh *cs);

/* Prices the block of `size` bytes at `addr`, starting from pipeline state `entry`
 * (NULL: after a branch, nothing to pipeline with). Returns false and fills bt->error
 * when an instruction cannot be decoded or priced. */
bool timing_analyze(csh cs, const uint8_t *code, uint32_t size, uint32_t addr,
		    const struct pipe_state *entry, struct block_timing *bt);

/* Cycles the first instruction of a block described by `entry` costs more (or less) when it
 * follows an instruction that left `prev`, instead of a branch: the block was entered by
 * falling through from another (QEMU splits straight-line code at page boundaries). Inline:
 * it is on the emulator's per-block path. */
static inline int32_t timing_entry_adjust(const struct entry_dependence *entry,
					  const struct pipe_state *prev)
{
	int32_t adjust = 0;
	if (entry->access && (entry->addr_regs & prev->alu_dests))
		adjust++;
	if (entry->pipelines && (entry->literal ? prev->after_literal : prev->after_load) &&
	    !(entry->addr_regs & prev->load_dests))
		adjust--;
	if (entry->load && prev->after_store)
		adjust += entry->literal ? TIMING_STORE_THEN_LITERAL : TIMING_STORE_THEN_LOAD;
	if (entry->it && prev->after_narrow)
		adjust--;
	return adjust;
}

/* Index of the instruction at `addr` in an analysed block, or -1. */
int timing_find(const struct block_timing *bt, uint32_t addr);

/* Static cost of the instructions of the block from index `from` to its end. */
uint32_t timing_suffix(const struct block_timing *bt, int from);

/* Total UDIV/SDIV cycles (2..12) for these operands. */
uint32_t timing_div(uint32_t n, uint32_t d, bool is_signed);

/* True if condition `cond` (arm_cc) holds for the APSR flags in `xpsr`. */
bool timing_cond_holds(uint8_t cond, uint32_t xpsr);

#endif
