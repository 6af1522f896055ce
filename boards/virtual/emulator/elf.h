/* Minimal ELF32 little-endian ARM reader: loadable segments, function and data symbols. */
#ifndef VBOARD_ELF_H
#define VBOARD_ELF_H

#include <stddef.h>
#include <stdint.h>

struct elf_segment {
	uint32_t paddr;      /* load (physical) address: .data sits in flash until reset copies it */
	uint32_t filesz;
	const uint8_t *data;
};

struct elf_func {
	uint32_t addr;       /* without the Thumb bit */
	uint32_t size;
	const char *name;
};

struct elf_image {
	uint8_t *file;
	size_t file_size;
	struct elf_segment *segs;
	size_t nsegs;
	struct elf_func *funcs;  /* sorted by address */
	size_t nfuncs;
	const void *symtab;      /* the raw symbol table (Elf32_Sym) and its strings, in `file` */
	size_t nsyms;
	const char *strtab;
	size_t strtab_size;
};

/* Reads `path`; on failure prints "vboard: error: ..." and returns -1. */
int elf_load(const char *path, struct elf_image *img);
/* A raw image (a .bin as st-flash writes it) as one segment at `base`, without symbols. */
int elf_load_raw(const char *path, uint32_t base, struct elf_image *img);
void elf_free(struct elf_image *img);

/* Function symbols named `name`: returns how many, and the index in `funcs` of the last one. */
size_t elf_find_function(const struct elf_image *img, const char *name, size_t *index);

/* The function whose bytes hold `addr`, or NULL. */
const struct elf_func *elf_function_at(const struct elf_image *img, uint32_t addr);

/* Data symbols (STT_OBJECT) named `name`: returns how many, and the address and size of the
 * last one. */
size_t elf_find_object(const struct elf_image *img, const char *name, uint32_t *addr,
		       uint32_t *size);

#endif
