#include "profile.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "elf.h"

#define MAX_DEPTH 1024
#define LOOKUP_BITS 12
#define NO_FUNC UINT32_MAX
#define EXC_RETURN_MIN 0xffffff00u

struct func_stats {
	uint64_t calls, inclusive, exclusive;
	uint32_t active; /* activations on the stack, so recursion is counted once inclusively */
};

struct frame {
	struct call_frame call;  /* func: index in elf->funcs */
	uint64_t entry;
	uint64_t handled_at_entry; /* profile.handled when the frame opened */
	bool counts;            /* outermost activation of its function */
	bool public_root;       /* opened a public-input function's subtree */
	bool interval_outermost; /* outermost activation of its function within the open interval */
};

/* Cycles of each call of one function: a small open-addressing histogram (calls of a
 * function take few distinct durations). */
struct call_histogram {
	uint32_t func;
	size_t used, capacity;
	struct {
		uint64_t cycles, count;
	} *slots;
};

#define MAX_TRACKED 16
#define PUBLIC_NAME "(public-input functions)"
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

struct interval {
	uint32_t func;          /* NO_FUNC: intervals off */
	FILE *out;
	uint32_t frame;         /* stack depth of the open interval's frame + 1, or 0 */
	uint64_t index, blocks, hash;
	uint64_t *exclusive, *calls, *inclusive;
	uint64_t *interrupted;   /* exception returns into the function (its blocks' cycles moved) */
	/* Per function: an activation that began in the open interval has not returned yet. The
	 * interval function's callers began before it and are not marked, so a function among
	 * them that is also called inside counts from that inner call. */
	bool *activation_open;
	uint32_t *touched;      /* functions with non-zero counters in this interval */
	uint32_t ntouched;
	bool *is_public;        /* functions whose time depends only on public inputs */
	uint32_t public_depth;  /* open public-input subtrees: their time goes to PUBLIC_SLOT */
	const char *id_symbol;  /* --interval-id-symbol, or NULL: each interval carries a sample id */
	uint32_t id_addr;       /* ... read from this word when the interval starts */
	uint32_t sample_id;
};

struct profile {
	const struct elf_image *elf;
	struct profile_core core;
	struct func_stats *stats;
	struct call_histogram tracked[MAX_TRACKED];
	uint32_t ntracked;
	struct interval iv;
	uint64_t unattributed;
	uint64_t last_cycles;
	/* Cycles in exception handlers so far, entry and return included. An interrupt lands
	 * wherever the clock puts it: its time is the handler's, not the interrupted functions'
	 * (a function's inclusive time is what its own path costs). */
	uint64_t handled;
	uint32_t current;       /* the function of the block running (NO_FUNC: none) */
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
	p->iv.func = NO_FUNC;
	p->current = NO_FUNC;
	return p;
}

static int func_by_name(const struct profile *p, const char *name, uint32_t *func)
{
	size_t index = 0, found = elf_find_function(p->elf, name, &index);
	*func = (uint32_t)index;
	if (found != 1)
		fprintf(stderr, "vboard: error: %s function symbol '%s' in the ELF\n",
			found ? "more than one" : "no", name);
	return found == 1 ? 0 : -1;
}

int profile_track_calls(struct profile *p, const char *name)
{
	uint32_t f;
	if (func_by_name(p, name, &f))
		return -1;
	if (p->ntracked == MAX_TRACKED) {
		fprintf(stderr, "vboard: error: at most %d functions for --profile-calls\n", MAX_TRACKED);
		return -1;
	}
	struct call_histogram *h = &p->tracked[p->ntracked++];
	h->func = f;
	h->capacity = 64;
	h->slots = calloc(h->capacity, sizeof *h->slots);
	return 0;
}

int profile_intervals(struct profile *p, const char *name, const char *path)
{
	if (func_by_name(p, name, &p->iv.func))
		return -1;
	/* Appended to and flushed per interval: a resumed constant-time test (pqscope ct --resume)
	 * goes on with the lines of the signatures captured before. */
	p->iv.out = fopen(path, "a");
	if (!p->iv.out) {
		fprintf(stderr, "vboard: error: cannot write %s\n", path);
		return -1;
	}
	size_t n = p->elf->nfuncs + 2; /* + unattributed + public-input time */
	p->iv.exclusive = calloc(n, sizeof *p->iv.exclusive);
	p->iv.calls = calloc(n, sizeof *p->iv.calls);
	p->iv.inclusive = calloc(n, sizeof *p->iv.inclusive);
	p->iv.interrupted = calloc(n, sizeof *p->iv.interrupted);
	p->iv.activation_open = calloc(n, sizeof *p->iv.activation_open);
	p->iv.touched = calloc(n, sizeof *p->iv.touched);
	p->iv.is_public = calloc(n, sizeof *p->iv.is_public);
	return 0;
}

int profile_public_function(struct profile *p, const char *name)
{
	uint32_t f;
	if (!p->iv.is_public) {
		fprintf(stderr, "vboard: error: --public-function needs --intervals\n");
		return -1;
	}
	if (func_by_name(p, name, &f))
		return -1;
	p->iv.is_public[f] = true;
	return 0;
}

int profile_interval_id_symbol(struct profile *p, const char *name)
{
	uint32_t size = 0;
	if (!p->iv.out) {
		fprintf(stderr, "vboard: error: --interval-id-symbol needs --intervals\n");
		return -1;
	}
	size_t found = elf_find_object(p->elf, name, &p->iv.id_addr, &size);
	if (found != 1) {
		fprintf(stderr, "vboard: error: %s data symbol '%s' in the ELF (--interval-id-symbol)\n",
			found ? "more than one" : "no", name);
		return -1;
	}
	if (size != 4) {
		fprintf(stderr, "vboard: error: data symbol '%s' is %u bytes, not a 32-bit word "
				"(--interval-id-symbol)\n", name, size);
		return -1;
	}
	p->iv.id_symbol = name;
	return 0;
}

static void histogram_add(struct call_histogram *h, uint64_t cycles, uint64_t count)
{
	if (2 * (h->used + 1) > h->capacity) { /* keep the table at most half full */
		struct call_histogram bigger = {h->func, 0, 2 * h->capacity, NULL};
		bigger.slots = calloc(bigger.capacity, sizeof *bigger.slots);
		for (size_t i = 0; i < h->capacity; i++)
			if (h->slots[i].count)
				histogram_add(&bigger, h->slots[i].cycles, h->slots[i].count);
		free(h->slots);
		*h = bigger;
	}
	size_t i = (size_t)(cycles * FNV_PRIME) & (h->capacity - 1);
	while (h->slots[i].count && h->slots[i].cycles != cycles)
		i = (i + 1) & (h->capacity - 1);
	if (!h->slots[i].count)
		h->used++;
	h->slots[i].cycles = cycles;
	h->slots[i].count += count;
}

static void interval_count(struct interval *iv, uint32_t f, uint64_t cycles, uint64_t calls)
{
	if (!iv->exclusive[f] && !iv->calls[f] && !iv->interrupted[f])
		iv->touched[iv->ntouched++] = f;
	iv->exclusive[f] += cycles;
	iv->calls[f] += calls;
}

static void json_string(FILE *f, const char *s);

static void interval_end(struct profile *p, uint64_t entry, uint64_t now)
{
	struct interval *iv = &p->iv;
	fprintf(iv->out, "{\"interval\": %llu, ", (unsigned long long)iv->index++);
	if (iv->id_symbol)
		fprintf(iv->out, "\"sample_id\": %lu, ", (unsigned long)iv->sample_id);
	fprintf(iv->out, "\"start_cycle\": %llu, \"cycles\": %llu, \"blocks\": %llu, "
			 "\"trace_hash\": \"0x%016llx\", \"functions\": {", (unsigned long long)entry,
		(unsigned long long)(now - entry), (unsigned long long)iv->blocks,
		(unsigned long long)iv->hash);
	for (uint32_t i = 0; i < iv->ntouched; i++) {
		uint32_t f = iv->touched[i];
		fputs(i ? ", " : "", iv->out);
		json_string(iv->out, f < p->elf->nfuncs ? p->elf->funcs[f].name
				     : f == p->elf->nfuncs ? "(unattributed)" : PUBLIC_NAME);
		/* The pseudo-functions have no activations: their time is all their own. */
		uint64_t inclusive = f < p->elf->nfuncs ? iv->inclusive[f] : iv->exclusive[f];
		fprintf(iv->out, ": [%llu, %llu, %llu", (unsigned long long)iv->exclusive[f],
			(unsigned long long)iv->calls[f], (unsigned long long)inclusive);
		if (iv->interrupted[f])
			fprintf(iv->out, ", %llu", (unsigned long long)iv->interrupted[f]);
		fputs("]", iv->out);
		iv->exclusive[f] = iv->calls[f] = iv->inclusive[f] = iv->interrupted[f] = 0;
	}
	fputs("}}\n", iv->out);
	fflush(iv->out);
	iv->ntouched = 0;
	iv->frame = 0;
}

int profile_attach(struct profile *p, const struct profile_core *core)
{
	p->core = *core;
	if (p->iv.id_symbol && !core->read_word(core->core, p->iv.id_addr, &p->iv.sample_id)) {
		fprintf(stderr, "vboard: error: data symbol '%s' at address 0x%08x is outside memory "
				"(--interval-id-symbol)\n", p->iv.id_symbol, p->iv.id_addr);
		return -1;
	}
	return 0;
}

static uint32_t find_func(const struct profile *p, uint32_t addr)
{
	const struct elf_func *f = elf_function_at(p->elf, addr);
	return f ? (uint32_t)(f - p->elf->funcs) : NO_FUNC;
}

/* A frame's time from its entry to `now`, less the exception handlers' that ran inside it. */
static uint64_t frame_cycles(const struct profile *p, const struct frame *fr, uint64_t now)
{
	return now - fr->entry - (p->handled - fr->handled_at_entry);
}

static void pop(struct profile *p, uint64_t now)
{
	struct frame *fr = &p->stack[--p->depth];
	struct func_stats *s = &p->stats[fr->call.func];
	uint64_t cycles = frame_cycles(p, fr, now);
	if (fr->counts) {
		s->inclusive += cycles;
		for (uint32_t i = 0; i < p->ntracked; i++)
			if (p->tracked[i].func == fr->call.func)
				histogram_add(&p->tracked[i], cycles, 1);
	}
	s->active--;
	if (fr->interval_outermost) {
		p->iv.activation_open[fr->call.func] = false;
		p->iv.inclusive[fr->call.func] += cycles;
	}
	if (fr->public_root)
		p->iv.public_depth--;
	if (p->iv.frame == p->depth + 1)
		interval_end(p, fr->entry, now);
}

/* Cycles spent in function `f` (NO_FUNC: outside every function symbol). */
static void book(struct profile *p, uint32_t f, uint64_t cycles)
{
	if (p->iv.frame)
		interval_count(&p->iv, p->iv.public_depth ? (uint32_t)p->elf->nfuncs + 1
				       : f == NO_FUNC ? (uint32_t)p->elf->nfuncs : f, cycles, 0);
	if (f == NO_FUNC)
		p->unattributed += cycles;
	else
		p->stats[f].exclusive += cycles;
}

void profile_stall(struct profile *p, uint64_t now)
{
	if (now <= p->last_cycles)
		return;
	book(p, p->current, now - p->last_cycles);
	p->last_cycles = now;
}

void profile_blocks_inside(struct profile *p, const uint32_t *addrs, uint32_t n, uint64_t now)
{
	if (p->iv.frame) {
		for (uint32_t i = 0; i < n; i++)
			p->iv.hash = (p->iv.hash ^ addrs[i]) * FNV_PRIME;
		p->iv.blocks += n;
	}
	profile_stall(p, now);
}

void profile_block(struct profile *p, uint32_t addr, uint64_t now)
{
	uint64_t start = p->last_cycles;
	if (now < start) /* model time was rewound to replay a cycle-counter read */
		now = start;
	p->last_cycles = now;
	while (call_returns(p->depth ? &p->stack[p->depth - 1].call : NULL, addr))
		pop(p, start);

	uint32_t slot = (addr >> 1) & ((1u << LOOKUP_BITS) - 1);
	if (p->lookup[slot].addr != addr) {
		p->lookup[slot].addr = addr;
		p->lookup[slot].func = find_func(p, addr);
	}
	uint32_t f = p->lookup[slot].func;
	p->current = f;
	if (p->iv.frame) {
		p->iv.hash = (p->iv.hash ^ addr) * FNV_PRIME;
		p->iv.blocks++;
	}
	book(p, f, now - start);
	if (f == NO_FUNC || addr != p->elf->funcs[f].addr)
		return;
	uint32_t lr = p->core.link_register(p->core.core) & ~1u;
	if (!call_begins(p->depth ? &p->stack[p->depth - 1].call : NULL, f, lr))
		return; /* a loop back to the entry, not a new call */
	p->stats[f].calls++;
	if (p->depth == MAX_DEPTH) {
		p->dropped_frames++;
		return;
	}
	bool public_root = p->iv.is_public && p->iv.is_public[f];
	struct frame *fr = &p->stack[p->depth++];
	*fr = (struct frame){{f, lr}, start, p->handled, p->stats[f].active == 0, public_root, false};
	p->stats[f].active++;
	if (f == p->iv.func && !p->iv.frame) {
		/* The interval starts with this block, whose cycles were counted just above. */
		p->iv.frame = p->depth;
		p->iv.hash = (FNV_OFFSET ^ addr) * FNV_PRIME;
		p->iv.blocks = 1;
		interval_count(&p->iv, f, now - start, 0);
		/* Memory is mapped for good (checked in profile_attach), so this read succeeds. */
		if (p->iv.id_symbol)
			p->core.read_word(p->core.core, p->iv.id_addr, &p->iv.sample_id);
	}
	if (p->iv.frame) {
		interval_count(&p->iv, f, 0, 1);
		fr->interval_outermost = !p->iv.activation_open[f];
		p->iv.activation_open[f] = true;
	}
	if (public_root) {
		/* This first block ran in the public function: move its cycles to the public slot
		 * (after counting the call, so the function keeps its place in `touched`). */
		if (p->iv.frame && !p->iv.public_depth) {
			p->iv.exclusive[f] -= now - start;
			interval_count(&p->iv, (uint32_t)p->elf->nfuncs + 1, now - start, 0);
		}
		p->iv.public_depth++;
	}
}

/* The handler's first block opened its frame (LR = EXC_RETURN); close it and its callees. The
 * function it returns into, at `resume`, is counted interrupted in the open interval. */
void profile_exception_return(struct profile *p, uint64_t cycles, uint32_t resume)
{
	uint32_t f = find_func(p, resume);
	if (p->iv.frame && f != NO_FUNC) {
		interval_count(&p->iv, f, 0, 0);
		p->iv.interrupted[f]++;
	}
	uint32_t d = p->depth;
	while (d && p->stack[d - 1].call.ret < EXC_RETURN_MIN)
		d--;
	if (!d)
		return;
	profile_stall(p, cycles); /* the return's own cycles are the handler's */
	uint64_t handler_cycles = frame_cycles(p, &p->stack[d - 1], cycles);
	while (p->depth >= d)
		pop(p, cycles);
	p->handled += handler_cycles;
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
			open_incl[p->stack[i].call.func] += frame_cycles(p, &p->stack[i], model_cycles);
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
	fprintf(f, "\n], \"call_distributions\": {");
	for (uint32_t i = 0; i < p->ntracked; i++) {
		const struct call_histogram *h = &p->tracked[i];
		fputs(i ? ",\n  " : "\n  ", f);
		json_string(f, p->elf->funcs[h->func].name);
		fputs(": [", f);
		const char *item = "";
		for (size_t j = 0; j < h->capacity; j++) {
			if (!h->slots[j].count)
				continue;
			fprintf(f, "%s[%llu, %llu]", item, (unsigned long long)h->slots[j].cycles,
				(unsigned long long)h->slots[j].count);
			item = ", ";
		}
		fputs("]", f);
	}
	fprintf(f, "}}\n");
	free(open_incl);
	return fclose(f) == 0 ? 0 : -1;
}

void profile_free(struct profile *p)
{
	if (p) {
		for (uint32_t i = 0; i < p->ntracked; i++)
			free(p->tracked[i].slots);
		if (p->iv.out)
			fclose(p->iv.out);
		free(p->iv.exclusive);
		free(p->iv.calls);
		free(p->iv.inclusive);
		free(p->iv.interrupted);
		free(p->iv.activation_open);
		free(p->iv.touched);
		free(p->iv.is_public);
		free(p->stats);
		free(p);
	}
}
