/* The memory's access rights as unicorn's TLB holds them, and the errors of invalid accesses.
 * Unicorn facts this file is built on:
 * - The UC_HOOK_MEM_INVALID callback sees the exact PC. */
#include "machine_internal.h"

static bool on_invalid(uc_engine *uc, uc_mem_type type, uint64_t address, int size,
		       int64_t value, void *user)
{
	struct machine *m = user;
	uint32_t addr = (uint32_t)address;
	const char *what = "access to";
	(void)uc, (void)size, (void)value;
	switch (type) {
	case UC_MEM_READ_UNMAPPED: what = "read from"; break;
	case UC_MEM_WRITE_UNMAPPED: what = "write to"; break;
	case UC_MEM_FETCH_UNMAPPED: what = "instruction fetch from"; break;
	case UC_MEM_WRITE_PROT: what = "write to read-only"; break;
	case UC_MEM_FETCH_PROT: what = "instruction fetch from non-executable"; break;
	default: break;
	}
	const char *name = board_peripheral_name(m->chip, addr);
	if (name)
		machine_fail(m, "%s unemulated peripheral %s at address 0x%08x", what, name, addr);
	else if (addr >= FLASH_BASE && addr < FLASH_BASE + m->chip->flash_size)
		machine_fail(m, "%s flash at address 0x%08x", what, addr);
	else
		machine_fail(m, "%s %s at address 0x%08x", what,
			     type == UC_MEM_WRITE_PROT || type == UC_MEM_FETCH_PROT ? "memory"
										: "unmapped memory",
			     addr);
	return false;
}

/* The TLB filled by this hook (unicorn's virtual TLB), identity-mapped, with each region's own
 * rights: unicorn 2.1.4 takes the rights of the Cortex-M default memory map instead, where SRAM
 * and CCM are executable, and keeps every store to an executable page on its slow path (it never
 * clears TLB_NOTDIRTY there), which made the emulator four times slower. So code runs from flash
 * only; anything but SRAM and CCM gets all rights here and meets its mapping's own checks and
 * the invalid-access hook. */
static bool on_tlb_fill(uc_engine *uc, uint64_t address, uc_mem_type type, uc_tlb_entry *result, void *user)
{
	struct machine *m = user;
	(void)uc;
	const struct chip *chip = m->chip;
	bool ram = (address >= SRAM_BASE && address - SRAM_BASE < chip->sram_size) ||
		   (address >= CCM_BASE && address - CCM_BASE < chip->ccm_size);
	if (ram && type == UC_MEM_FETCH) {
		machine_fail(m, "instruction fetch from %s at address 0x%08x: the virtual board runs code "
				"from flash only", address >= SRAM_BASE ? "SRAM" : chip->ccm_name,
			     (uint32_t)address);
		return false;
	}
	result->paddr = address;
	result->perms = ram ? UC_PROT_READ | UC_PROT_WRITE : UC_PROT_ALL;
	if (type != UC_MEM_FETCH) /* a fetch's fill comes while a block is translated: nothing restored */
		clear_it_state(m);
	return true;
}

/* The invalid-access hook on everything but SRAM and CCM, where every access is valid (unicorn
 * 2.1.4 also keeps each store to a page any memory hook covers on its slow path), and the TLB
 * filled by on_tlb_fill. */
int hook_memory(struct machine *m)
{
	const uint64_t gaps[][2] = {
		{0, CCM_BASE - 1},
		{CCM_BASE + m->chip->ccm_size, SRAM_BASE - 1},
		{SRAM_BASE + m->chip->sram_size, UINT32_MAX},
	};
	for (size_t i = 0; i < sizeof gaps / sizeof gaps[0]; i++) {
		uc_hook h;
		if (uc_hook_add(m->uc, &h, UC_HOOK_MEM_INVALID, on_invalid, m, gaps[i][0], gaps[i][1]) !=
		    UC_ERR_OK)
			return -1;
	}
	uc_hook h;
	if (uc_ctl_tlb_mode(m->uc, UC_TLB_VIRTUAL) != UC_ERR_OK ||
	    uc_hook_add(m->uc, &h, UC_HOOK_TLB_FILL, on_tlb_fill, m, 1, 0) != UC_ERR_OK)
		return -1;
	return 0;
}
