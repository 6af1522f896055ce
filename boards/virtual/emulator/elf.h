/* Minimal ELF32 little-endian ARM reader: loadable segments and function symbols. */
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
};

/* Reads `path`; on failure prints "vboard: error: ..." and returns -1. */
int elf_load(const char *path, struct elf_image *img);
void elf_free(struct elf_image *img);

#endif
