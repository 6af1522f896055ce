#include "elf.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *path, const char *what)
{
	fprintf(stderr, "vboard: error: %s: %s\n", path, what);
	return -1;
}

/* Aliases (libgcc's __aeabi_l2d is __floatdidf) share an address: ordered by size and name, the
 * same order as the host tool's (pqscope.project.elf.Symbolizer), so that both name the last one. */
static int by_addr(const void *a, const void *b)
{
	const struct elf_func *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* A function symbol as read, with where its section's bytes end (0 outside any section). */
struct read_func {
	struct elf_func func; /* first: by_addr orders these too */
	uint32_t section_end;
};

/* The functions by address, into img->funcs. Assembly functions declared without .size (pqm4's
 * Keccak and NTTs) reach the next function or the end of their section: the profiler, the exact
 * check's leaf summaries and the host tool (pqscope.project.elf.Symbolizer) see them as functions.
 * A sizeless symbol inside a sized function, or at its address, is a label of that function and
 * keeps no bytes. */
static void sort_functions(struct elf_image *img, struct read_func *listed)
{
	qsort(listed, img->nfuncs, sizeof *listed, by_addr);
	uint32_t covered = 0; /* the end of the sized functions so far */
	for (size_t i = 0; i < img->nfuncs; i++) {
		struct elf_func *f = &img->funcs[i];
		*f = listed[i].func;
		if (f->size) {
			if (f->addr + f->size > covered)
				covered = f->addr + f->size;
			continue;
		}
		if (f->addr < covered)
			continue;
		uint32_t end = listed[i].section_end;
		size_t j = i + 1;
		while (j < img->nfuncs && listed[j].func.addr == f->addr && !listed[j].func.size)
			j++;
		if (j < img->nfuncs && listed[j].func.addr == f->addr)
			continue; /* an alias of the sized function at its address */
		if (j < img->nfuncs && listed[j].func.addr < end)
			end = listed[j].func.addr;
		f->size = end > f->addr ? end - f->addr : 0;
	}
}

static int read_whole(const char *path, struct elf_image *img)
{
	memset(img, 0, sizeof *img);
	FILE *f = fopen(path, "rb");
	if (!f)
		return fail(path, "cannot open");
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	img->file = malloc(len > 0 ? (size_t)len : 1);
	img->file_size = (size_t)len;
	if (len <= 0 || fread(img->file, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		return fail(path, "cannot read");
	}
	fclose(f);
	return 0;
}

int elf_load_raw(const char *path, uint32_t base, struct elf_image *img)
{
	if (read_whole(path, img))
		return -1;
	img->segs = calloc(1, sizeof *img->segs);
	img->segs[0] = (struct elf_segment){base, (uint32_t)img->file_size, img->file};
	img->nsegs = 1;
	return 0;
}

int elf_load(const char *path, struct elf_image *img)
{
	if (read_whole(path, img))
		return -1;

	const uint8_t *b = img->file;
	const Elf32_Ehdr *eh = (const Elf32_Ehdr *)b;
	if (img->file_size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS32 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_ARM)
		return fail(path, "not a 32-bit little-endian ARM ELF file");
	if ((size_t)eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf32_Phdr) > img->file_size ||
	    (size_t)eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf32_Shdr) > img->file_size)
		return fail(path, "truncated ELF headers");

	const Elf32_Phdr *ph = (const Elf32_Phdr *)(b + eh->e_phoff);
	img->segs = calloc(eh->e_phnum ? eh->e_phnum : 1, sizeof *img->segs);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_filesz == 0)
			continue;
		if ((size_t)ph[i].p_offset + ph[i].p_filesz > img->file_size)
			return fail(path, "segment outside the file");
		img->segs[img->nsegs++] = (struct elf_segment){
			ph[i].p_paddr, ph[i].p_filesz, b + ph[i].p_offset};
	}

	const Elf32_Shdr *sh = (const Elf32_Shdr *)(b + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf32_Shdr *strs = &sh[sh[i].sh_link];
		if ((size_t)sh[i].sh_offset + sh[i].sh_size > img->file_size ||
		    (size_t)strs->sh_offset + strs->sh_size > img->file_size)
			return fail(path, "symbol table outside the file");
		const Elf32_Sym *sym = (const Elf32_Sym *)(b + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof *sym;
		img->symtab = sym;
		img->nsyms = n;
		img->strtab = (const char *)b + strs->sh_offset;
		img->strtab_size = strs->sh_size;
		img->funcs = calloc(n ? n : 1, sizeof *img->funcs);
		struct read_func *listed = calloc(n ? n : 1, sizeof *listed);
		for (size_t k = 0; k < n; k++) {
			if (ELF32_ST_TYPE(sym[k].st_info) != STT_FUNC || sym[k].st_name >= strs->sh_size)
				continue;
			uint16_t section = sym[k].st_shndx;
			listed[img->nfuncs++] = (struct read_func){
				{sym[k].st_value & ~1u, sym[k].st_size, img->strtab + sym[k].st_name},
				section < eh->e_shnum ? sh[section].sh_addr + sh[section].sh_size : 0};
		}
		sort_functions(img, listed);
		free(listed);
		break;
	}
	return 0;
}

void elf_free(struct elf_image *img)
{
	free(img->segs);
	free(img->funcs);
	free(img->file);
	memset(img, 0, sizeof *img);
}

size_t elf_find_function(const struct elf_image *img, const char *name, size_t *index)
{
	size_t found = 0;
	for (size_t i = 0; i < img->nfuncs; i++) {
		if (!strcmp(img->funcs[i].name, name)) {
			*index = i;
			found++;
		}
	}
	return found;
}

const struct elf_func *elf_function_at(const struct elf_image *img, uint32_t addr)
{
	size_t lo = 0, hi = img->nfuncs; /* the first function after addr is funcs[lo] */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (img->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && addr - img->funcs[lo - 1].addr < img->funcs[lo - 1].size ? &img->funcs[lo - 1] : NULL;
}

size_t elf_find_object(const struct elf_image *img, const char *name, uint32_t *addr,
		       uint32_t *size)
{
	const Elf32_Sym *sym = img->symtab;
	size_t found = 0;
	for (size_t k = 0; k < img->nsyms; k++) {
		if (ELF32_ST_TYPE(sym[k].st_info) != STT_OBJECT || sym[k].st_name >= img->strtab_size ||
		    strcmp(img->strtab + sym[k].st_name, name))
			continue;
		*addr = sym[k].st_value;
		*size = sym[k].st_size;
		found++;
	}
	return found;
}
