/* The taint tracker's instruction decoder and its decoded-instruction cache (taint_decode.c),
 * internal to the tracker: taint.c looks each executed instruction up here and applies the
 * description it gets (struct insn); on a miss, taint_decode_at() decodes it with capstone. The
 * lookup is inline: it runs before every instruction. */
#ifndef VBOARD_TAINT_DECODE_H
#define VBOARD_TAINT_DECODE_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdint.h>

#include "taint.h"

#define SLOT_PC 15
#define BIT(s) (1ull << (s))
#define F_N BIT(TAINT_APSR_N)
#define F_Z BIT(TAINT_APSR_Z)
#define F_C BIT(TAINT_APSR_C)
#define F_V BIT(TAINT_APSR_V)
#define NZCV (F_N | F_Z | F_C | F_V)
#define F_Q BIT(TAINT_APSR_Q)
#define F_GE BIT(TAINT_APSR_GE)
#define XFER_MAX 32                     /* VLDM of 16 d registers */

enum insn_class {
	CLASS_DATA,   /* every register written gets the OR of those read */
	CLASS_LOAD,   /* xfer[k] <- the bytes at the address + k * xbytes */
	CLASS_STORE,  /* the bytes at the address + k * xbytes <- xfer[k] */
	CLASS_PAIRS,  /* xfer[k] <- src[k] (VMOV of two registers) */
};

/* One instruction as the propagation sees it, decoded once per address. */
struct insn {
	uint32_t key;      /* address | 1; 0: empty slot */
	uint8_t cls;       /* enum insn_class */
	uint8_t finding;   /* enum taint_kind + 1 decided by `decides` (data class), or 0 */
	int8_t base, index; /* address registers (loads/stores), -1: none */
	uint8_t shift;     /* loads/stores: the index's; UDIV/SDIV: 1 if signed */
	uint8_t xbytes;    /* bytes per transfer */
	uint8_t nxfer;
	int32_t offset;    /* address = offset + base + (index << shift); PC resolved */
	uint64_t reads;    /* data: the value written is their OR; loads/stores: ORed in too */
	uint64_t writes;   /* set to the value */
	uint64_t merges;   /* ORed with the value */
	uint64_t zeroes;   /* set untainted */
	uint64_t decides;  /* the finding's deciding slots */
	uint8_t cond;      /* a branch finding's condition (arm_cc; IT: its first) ... */
	int8_t cond_reg;   /* ... on this core register's zero test (CBZ, CBNZ), or on the flags: -1 */
	uint8_t xfer[XFER_MAX]; /* slot moved at offset k * xbytes (SLOT_PC: a jump target) */
	uint8_t src[2];    /* CLASS_PAIRS; UDIV/SDIV: dividend, divisor (core registers) */
	bool unshadowed;   /* reads state no slot holds (a special register, the exclusive monitor,
			    * FPSCR's other bits): a leaf call that runs it is not summarised */
};

struct block_timing;

/* The decoded instructions, by address (open addressing), and what decodes a miss. */
struct taint_decoder {
	struct insn *insns;
	uint32_t insn_mask, insn_used;
	csh cs;
	struct block_timing *it_timing; /* prices IT blocks' members (select or branch) */
};

static inline uint32_t insn_hash(const struct taint_decoder *dec, uint32_t addr)
{
	return ((addr >> 1) * 0x9e3779b1u >> 8) & dec->insn_mask;
}

/* The cache slot of the instruction at `addr`: key 0 if it is not decoded yet. */
static inline struct insn *insn_slot(struct taint_decoder *dec, uint32_t addr)
{
	uint32_t i = insn_hash(dec, addr);
	while (dec->insns[i].key && dec->insns[i].key != (addr | 1))
		i = (i + 1) & dec->insn_mask;
	return &dec->insns[i];
}

/* Decodes the instruction at `addr` (an IT instruction with its block) into the cache; NULL if
 * it cannot be decoded. */
struct insn *taint_decode_at(struct taint_decoder *dec, const struct taint_core *core,
			     uint32_t addr);
/* Opens capstone and an empty cache; false if capstone cannot be opened. */
bool taint_decoder_open(struct taint_decoder *dec);
void taint_decoder_close(struct taint_decoder *dec);

#endif
