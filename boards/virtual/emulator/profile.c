#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf.h"
#include "machine.h"

#define MAX_DEPTH 1024
#define LOOKUP_BITS 12
#define NO_FUNC UINT32_MAX
#define EXC_RETURN_MIN 0xffffff00u

struct func_stats {
	uint64_t calls, inclusive, exclusive;
	uint32_t active; /* activations on the stack, so recursion is counted once inclusively */
};

struct frame {
	uint32_t func, ret;
	uint64_t entry;
	int counts;      /* outermost activation of its function */
};

struct profile {
	const struct elf_image *elf;
	struct machine *m;
	struct func_stats *stats;
	uint64_t unattributed;
	uint64_t last_cycles;
	struct frame stack[MAX_DEPTH];
	uint32_t depth;
	uint64_t dropped_frames;
	struct {
		uint32_t addr, func;
	} lookup[1u << LOOKUP_BITS];
};

struct profile *profile_new(const struct elf_image *elf)
{
	struct profile *p = calloc(1, sizeof *p);
	p->elf = elf;
	p->stats = calloc(elf->nfuncs + 1, sizeof *p->stats);
	for (size_t i = 0; i < (1u << LOOKUP_BITS); i++)
		p->lookup[i].addr = 1; /* odd: never a block address */
	return p;
}

int profile_attach(struct profile *p, struct machine *m)
{
	p->m = m;
	return 0;
}

static uint32_t find_func(const struct profile *p, uint32_t addr)
{
	const struct elf_func *f = p->elf->funcs;
	size_t lo = 0, hi = p->elf->nfuncs;
	while (lo < hi) { /* last function starting at or before addr */
		size_t mid = (lo + hi) / 2;
		if (f[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NO_FUNC;
	size_t i = lo - 1;
	uint32_t end = f[i].size ? f[i].addr + f[i].size
				 : (i + 1 < p->elf->nfuncs ? f[i + 1].addr : f[i].addr + 2);
	return addr < end ? (uint32_t)i : NO_FUNC;
}

static void pop(struct profile *p, uint64_t now)
{
	struct frame *fr = &p->stack[--p->depth];
	struct func_stats *s = &p->stats[fr->func];
	if (fr->counts)
		s->inclusive += now - fr->entry;
	s->active--;
}

void profile_block(struct profile *p, uint32_t addr)
{
	uint64_t start = p->last_cycles, now = p->m->cycles;
	if (now < start) /* model time was rewound to replay a cycle-counter read */
		now = start;
	p->last_cycles = now;
	while (p->depth && p->stack[p->depth - 1].ret == addr)
		pop(p, start);

	uint32_t slot = (addr >> 1) & ((1u << LOOKUP_BITS) - 1);
	if (p->lookup[slot].addr != addr) {
		p->lookup[slot].addr = addr;
		p->lookup[slot].func = find_func(p, addr);
	}
	uint32_t f = p->lookup[slot].func;
	if (f == NO_FUNC) {
		p->unattributed += now - start;
		return;
	}
	p->stats[f].exclusive += now - start;
	if (addr != p->elf->funcs[f].addr)
		return;
	uint32_t lr = 0;
	uc_reg_read(p->m->uc, UC_ARM_REG_LR, &lr);
	lr &= ~1u;
	if (p->depth && p->stack[p->depth - 1].func == f && p->stack[p->depth - 1].ret == lr)
		return; /* a loop back to the entry, not a new call */
	p->stats[f].calls++;
	if (p->depth == MAX_DEPTH) {
		p->dropped_frames++;
		return;
	}
	p->stack[p->depth++] = (struct frame){f, lr, start, p->stats[f].active == 0};
	p->stats[f].active++;
}

/* The handler's first block opened its frame (LR = EXC_RETURN); close it and its callees. */
void profile_exception_return(struct profile *p, uint64_t cycles)
{
	uint32_t d = p->depth;
	while (d && p->stack[d - 1].ret < EXC_RETURN_MIN)
		d--;
	if (!d)
		return;
	while (p->depth >= d)
		pop(p, cycles);
	p->last_cycles = cycles;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

int profile_write(const struct profile *p, const char *path, uint64_t model_cycles)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "vboard: error: cannot write %s\n", path);
		return -1;
	}
	/* frames still open at exit (main, the idle loop) count up to the end */
	uint64_t *open_incl = calloc(p->elf->nfuncs + 1, sizeof *open_incl);
	for (uint32_t i = 0; i < p->depth; i++)
		if (p->stack[i].counts)
			open_incl[p->stack[i].func] += model_cycles - p->stack[i].entry;
	fprintf(f, "{\"format\": \"pqscope-vboard-profile\", \"version\": 1, \"model_cycles\": %llu, "
		   "\"unattributed_cycles\": %llu, \"dropped_frames\": %llu, \"functions\": [",
		(unsigned long long)model_cycles, (unsigned long long)p->unattributed,
		(unsigned long long)p->dropped_frames);
	const char *sep = "\n  ";
	for (size_t i = 0; i < p->elf->nfuncs; i++) {
		const struct func_stats *s = &p->stats[i];
		if (!s->calls && !s->exclusive)
			continue;
		fprintf(f, "%s{\"name\": ", sep);
		json_string(f, p->elf->funcs[i].name);
		fprintf(f, ", \"addr\": \"0x%08x\", \"size\": %u, \"calls\": %llu, "
			   "\"inclusive_cycles\": %llu, \"exclusive_cycles\": %llu}",
			p->elf->funcs[i].addr, p->elf->funcs[i].size, (unsigned long long)s->calls,
			(unsigned long long)(s->inclusive + open_incl[i]),
			(unsigned long long)s->exclusive);
		sep = ",\n  ";
	}
	fprintf(f, "\n], \"call_distributions\": {}, \"trace_hashes\": []}\n");
	free(open_incl);
	return fclose(f) == 0 ? 0 : -1;
}

void profile_free(struct profile *p)
{
	if (p) {
		free(p->stats);
		free(p);
	}
}
