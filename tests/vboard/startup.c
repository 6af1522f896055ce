/* Vector table and reset handler for the test images: copy .data, zero .bss, enable the FPU,
 * run main, then idle in "b ." (the emulator's halt). */
#include <stdint.h>

#define SCB_CCR (*(volatile uint32_t *)0xe000ed14)
#define SCB_CPACR (*(volatile uint32_t *)0xe000ed88)

extern uint32_t _data_loadaddr, _data, _edata, _ebss, _stack;
int main(void);
void reset_handler(void);
void sys_tick_handler(void) __attribute__((weak, alias("blocking_handler")));

void blocking_handler(void)
{
	for (;;)
		;
}

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
	(void (*)(void))&_stack, reset_handler,  blocking_handler, blocking_handler,
	blocking_handler,        blocking_handler, blocking_handler, 0,
	0,                       0,              0,                blocking_handler,
	blocking_handler,        0,              blocking_handler, sys_tick_handler,
};

void reset_handler(void)
{
	uint32_t *src = &_data_loadaddr, *dst = &_data;
	while (dst < &_edata)
		*dst++ = *src++;
	while (dst < &_ebss)
		*dst++ = 0;
	SCB_CCR |= 1u << 9;                  /* STKALIGN */
	SCB_CPACR |= 0xfu << 20;             /* CP10, CP11 full access */
	__asm__ volatile("dsb\n\tisb");
	main();
	for (;;)
		__asm__ volatile("b .");
}
