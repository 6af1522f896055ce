/* Unit tests of the ELF reader on hand-written ELFs: aliases (one address, several names) listed in
 * an order the reader must not depend on; functions without a size. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "elf.h"

static const char names[] = "\0__floatdidf\0zeta\0__aeabi_l2d\0alpha";
enum { FLOATDIDF = 1, ZETA = 13, L2D = 18, ALPHA = 30 };

/* An ELF of `symbols` (names in `strings`) and one code section, .text at 0x80..0x400. */
static void write_image(const char *path, const Elf32_Sym *symbols, size_t nsymbols, const char *strings,
			size_t strings_size)
{
	Elf32_Ehdr header = {.e_type = ET_EXEC, .e_machine = EM_ARM, .e_version = EV_CURRENT,
			     .e_ehsize = sizeof(Elf32_Ehdr), .e_shentsize = sizeof(Elf32_Shdr), .e_shnum = 4};
	memcpy(header.e_ident, ELFMAG, SELFMAG);
	header.e_ident[EI_CLASS] = ELFCLASS32;
	header.e_ident[EI_DATA] = ELFDATA2LSB;
	header.e_ident[EI_VERSION] = EV_CURRENT;
	uint32_t symtab_at = sizeof header, strtab_at = symtab_at + (uint32_t)(nsymbols * sizeof *symbols);
	header.e_shoff = strtab_at + (uint32_t)strings_size;
	Elf32_Shdr sections[4] = {
		{0},
		{.sh_type = SHT_SYMTAB, .sh_offset = symtab_at, .sh_size = (uint32_t)(nsymbols * sizeof *symbols),
		 .sh_link = 2, .sh_entsize = sizeof(Elf32_Sym)},
		{.sh_type = SHT_STRTAB, .sh_offset = strtab_at, .sh_size = (uint32_t)strings_size},
		{.sh_type = SHT_NOBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = 0x80, .sh_size = 0x380},
	};
	FILE *file = fopen(path, "wb");
	fwrite(&header, sizeof header, 1, file);
	fwrite(symbols, sizeof *symbols, nsymbols, file);
	fwrite(strings, strings_size, 1, file);
	fwrite(sections, sizeof sections, 1, file);
	fclose(file);
}

static void load(struct elf_image *image, const Elf32_Sym *symbols, size_t nsymbols, const char *strings,
		 size_t strings_size)
{
	char path[] = "/tmp/vboard-elf-test-XXXXXX";
	int descriptor = mkstemp(path);
	CHECK(descriptor >= 0);
	close(descriptor);
	write_image(path, symbols, nsymbols, strings, strings_size);
	CHECK(elf_load(path, image) == 0);
	unlink(path);
}

/* The host tool (pqscope.project.elf.Symbolizer) orders by address, size and name and takes the last
 * name at an address: the profiler must name the same function, or the replay cannot find the
 * exact check's findings in the profile. */
static void test_aliases_are_ordered_by_name_whatever_the_symbol_table_order(void)
{
	const Elf32_Sym symbols[] = {
		{0},
		{.st_name = FLOATDIDF, .st_value = 0x101, .st_size = 8, .st_info = ELF32_ST_INFO(STB_GLOBAL, STT_FUNC)},
		{.st_name = ZETA, .st_value = 0x201, .st_size = 4, .st_info = ELF32_ST_INFO(STB_GLOBAL, STT_FUNC)},
		{.st_name = L2D, .st_value = 0x101, .st_size = 8, .st_info = ELF32_ST_INFO(STB_GLOBAL, STT_FUNC)},
		{.st_name = ALPHA, .st_value = 0x81, .st_size = 4, .st_info = ELF32_ST_INFO(STB_LOCAL, STT_FUNC)},
	};
	struct elf_image image;
	load(&image, symbols, sizeof symbols / sizeof *symbols, names, sizeof names);
	const char *expected[] = {"alpha", "__aeabi_l2d", "__floatdidf", "zeta"};
	CHECK(image.nfuncs == 4);
	for (size_t i = 0; i < 4 && i < image.nfuncs; i++)
		CHECK(!strcmp(image.funcs[i].name, expected[i]));
	CHECK(image.nfuncs > 1 && image.funcs[1].addr == 0x100 && image.funcs[2].addr == 0x100);
	elf_free(&image);
}

/* Assembly functions without .size (pqm4's Keccak and NTTs) reach the next function or their
 * section's end, as the host tool's Symbolizer has them; a sizeless label inside a sized function
 * or at its address has no bytes. */
static void test_sizeless_functions_reach_the_next_function_or_their_sections_end(void)
{
	static const char strings[] = "\0body\0label\0permute\0next\0alias\0tail";
	enum { BODY = 1, LABEL = 6, PERMUTE = 12, NEXT = 20, ALIAS = 25, TAIL = 31 };
	const unsigned char func = ELF32_ST_INFO(STB_GLOBAL, STT_FUNC);
	const Elf32_Sym symbols[] = {
		{0},
		{.st_name = BODY, .st_value = 0x101, .st_size = 0x20, .st_info = func, .st_shndx = 3},
		{.st_name = LABEL, .st_value = 0x111, .st_info = func, .st_shndx = 3},
		{.st_name = PERMUTE, .st_value = 0x141, .st_info = func, .st_shndx = 3},
		{.st_name = NEXT, .st_value = 0x181, .st_size = 0x10, .st_info = func, .st_shndx = 3},
		{.st_name = ALIAS, .st_value = 0x181, .st_info = func, .st_shndx = 3},
		{.st_name = TAIL, .st_value = 0x1c1, .st_info = func, .st_shndx = 3},
	};
	struct elf_image image;
	load(&image, symbols, sizeof symbols / sizeof *symbols, strings, sizeof strings);
	const struct { const char *name; uint32_t size; } expected[] = {
		{"body", 0x20}, {"label", 0}, {"permute", 0x40}, {"alias", 0}, {"next", 0x10}, {"tail", 0x400 - 0x1c0},
	};
	CHECK(image.nfuncs == 6);
	for (size_t i = 0; i < 6 && i < image.nfuncs; i++)
		CHECK(!strcmp(image.funcs[i].name, expected[i].name) && image.funcs[i].size == expected[i].size);
	const struct elf_func *at = elf_function_at(&image, 0x17e);
	CHECK(at && !strcmp(at->name, "permute"));
	CHECK(!elf_function_at(&image, 0x400));
	elf_free(&image);
}

/* A raw image (st-flash's .bin) is one segment at the base it is loaded to, byte for byte. */
static void test_a_raw_image_is_one_segment_at_its_base(void)
{
	char path[] = "/tmp/vboard-bin-test-XXXXXX";
	int descriptor = mkstemp(path);
	CHECK(descriptor >= 0);
	const uint8_t bytes[] = {0x00, 0x00, 0x02, 0x20, 0x09, 0x01, 0x00, 0x08, 0xfe, 0xe7};
	CHECK(write(descriptor, bytes, sizeof bytes) == (ssize_t)sizeof bytes);
	close(descriptor);
	struct elf_image image;
	CHECK(elf_load_raw(path, 0x08000000u, &image) == 0);
	unlink(path);
	CHECK(image.nsegs == 1 && image.nfuncs == 0);
	CHECK(image.segs[0].paddr == 0x08000000u && image.segs[0].filesz == sizeof bytes);
	CHECK(!memcmp(image.segs[0].data, bytes, sizeof bytes));
	elf_free(&image);
}

int main(void)
{
	test_aliases_are_ordered_by_name_whatever_the_symbol_table_order();
	test_sizeless_functions_reach_the_next_function_or_their_sections_end();
	test_a_raw_image_is_one_segment_at_its_base();
	return check_summary("elf tests");
}
