/* Unit tests of the ELF reader: a hand-written ELF whose symbol table lists aliases (one address,
 * several names) in an order the reader must not depend on. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "elf.h"

static const char names[] = "\0__floatdidf\0zeta\0__aeabi_l2d\0alpha";
enum { FLOATDIDF = 1, ZETA = 13, L2D = 18, ALPHA = 30 };

static void write_image(const char *path)
{
	Elf32_Sym symbols[] = {
		{0},
		{.st_name = FLOATDIDF, .st_value = 0x101, .st_size = 8, .st_info = ELF32_ST_INFO(STB_GLOBAL, STT_FUNC)},
		{.st_name = ZETA, .st_value = 0x201, .st_size = 4, .st_info = ELF32_ST_INFO(STB_GLOBAL, STT_FUNC)},
		{.st_name = L2D, .st_value = 0x101, .st_size = 8, .st_info = ELF32_ST_INFO(STB_GLOBAL, STT_FUNC)},
		{.st_name = ALPHA, .st_value = 0x81, .st_size = 4, .st_info = ELF32_ST_INFO(STB_LOCAL, STT_FUNC)},
	};
	Elf32_Ehdr header = {.e_type = ET_EXEC, .e_machine = EM_ARM, .e_version = EV_CURRENT,
			     .e_ehsize = sizeof(Elf32_Ehdr), .e_shentsize = sizeof(Elf32_Shdr), .e_shnum = 3};
	memcpy(header.e_ident, ELFMAG, SELFMAG);
	header.e_ident[EI_CLASS] = ELFCLASS32;
	header.e_ident[EI_DATA] = ELFDATA2LSB;
	header.e_ident[EI_VERSION] = EV_CURRENT;
	uint32_t symtab_at = sizeof header, strtab_at = symtab_at + sizeof symbols;
	header.e_shoff = strtab_at + sizeof names;
	Elf32_Shdr sections[3] = {
		{0},
		{.sh_type = SHT_SYMTAB, .sh_offset = symtab_at, .sh_size = sizeof symbols, .sh_link = 2,
		 .sh_entsize = sizeof(Elf32_Sym)},
		{.sh_type = SHT_STRTAB, .sh_offset = strtab_at, .sh_size = sizeof names},
	};
	FILE *file = fopen(path, "wb");
	fwrite(&header, sizeof header, 1, file);
	fwrite(symbols, sizeof symbols, 1, file);
	fwrite(names, sizeof names, 1, file);
	fwrite(sections, sizeof sections, 1, file);
	fclose(file);
}

/* The host tool (pqscope.project.elf.Symbolizer) orders by address, size and name and takes the last
 * name at an address: the profiler must name the same function, or the replay cannot find the
 * exact check's findings in the profile. */
static void test_aliases_are_ordered_by_name_whatever_the_symbol_table_order(void)
{
	char path[] = "/tmp/vboard-elf-test-XXXXXX";
	int descriptor = mkstemp(path);
	CHECK(descriptor >= 0);
	close(descriptor);
	write_image(path);
	struct elf_image image;
	CHECK(elf_load(path, &image) == 0);
	unlink(path);
	const char *expected[] = {"alpha", "__aeabi_l2d", "__floatdidf", "zeta"};
	CHECK(image.nfuncs == 4);
	for (size_t i = 0; i < 4 && i < image.nfuncs; i++)
		CHECK(!strcmp(image.funcs[i].name, expected[i]));
	CHECK(image.nfuncs > 1 && image.funcs[1].addr == 0x100 && image.funcs[2].addr == 0x100);
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
	test_a_raw_image_is_one_segment_at_its_base();
	return check_summary("elf tests");
}
