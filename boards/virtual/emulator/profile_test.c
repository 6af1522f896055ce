/* Unit tests of the profiler's intervals: hand-made functions and a fake core whose link
 * register the test sets, so every block's time and every line written is known exactly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "elf.h"
#include "profile.h"


#define MAIN 0x1000u
#define SIGN 0x2000u   /* the interval function */
#define HELPER 0x3000u /* calls the interval function, and is called (recursively) inside it */
#define LEAF 0x4000u
#define PUBLIC 0x5000u /* a public-input function */
#define HANDLER 0x6000u /* an interrupt handler */
#define NO_SYMBOL 0x8000u
#define EXC_RETURN 0xfffffff9u

static struct elf_func funcs[] = {
	{MAIN, 0x100, "main"},     {SIGN, 0x100, "sign"},     {HELPER, 0x100, "helper"},
	{LEAF, 0x100, "leaf"},     {PUBLIC, 0x100, "public"}, {HANDLER, 0x100, "handler"},
};

static uint32_t link_register_value;

static uint32_t fake_link_register(void *core)
{
	(void)core;
	return link_register_value;
}

static bool fake_read_word(void *core, uint32_t addr, uint32_t *value)
{
	(void)core;
	(void)addr;
	*value = 0;
	return true;
}

static struct profile *prof;

/* A block at `addr` ran until model time `end`; at a function's first address, `lr` tells a
 * call (a new return address) from a jump back to the entry. */
static void block(uint32_t addr, uint32_t lr, uint64_t end)
{
	link_register_value = lr;
	profile_block(prof, addr, end);
}

static struct elf_image elf = {.funcs = funcs, .nfuncs = sizeof funcs / sizeof *funcs};

/* A profiler of `elf` writing the intervals of "sign" to a new file at `path` (a mkstemp pattern),
 * with `public` (if not NULL) a public-input function. */
static void start_profile(char *path, const char *public)
{
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	prof = profile_new(&elf);
	CHECK(profile_intervals(prof, "sign", path) == 0);
	if (public)
		CHECK(profile_public_function(prof, public) == 0);
	CHECK(profile_attach(prof, &(struct profile_core){NULL, fake_link_register, fake_read_word})
	      == 0);
}

static void test_intervals_count_inclusive_time_of_activations_inside(void)
{
	char path[] = "/tmp/vboard-profile-test-XXXXXX";
	start_profile(path, "public");

	/* main calls helper, which calls sign: both callers stay open across the interval. */
	block(MAIN, 0x0900, 10);
	block(HELPER, MAIN + 0x10, 20);
	/* Interval 0 (cycles 20..90): sign calls helper, which recurses once and calls leaf. */
	block(SIGN, HELPER + 0x10, 30);
	block(HELPER, SIGN + 0x10, 40);
	block(HELPER, HELPER + 0x20, 50);   /* the recursive call: no inclusive time of its own */
	block(LEAF, HELPER + 0x30, 60);
	block(LEAF + 4, 0, 65);
	block(HELPER + 0x30, 0, 70);        /* leaf returned: 50..65 */
	block(HELPER + 0x20, 0, 80);        /* the recursive helper returned */
	block(SIGN + 0x10, 0, 90);          /* the outermost helper inside returned: 30..80 */
	block(HELPER + 0x10, 0, 100);       /* sign returned: the interval ends */
	/* Interval 1 (cycles 100..160): the public function and its callee leaf book their
	 * exclusive time to the pseudo-function, their inclusive time to themselves; a block
	 * outside every symbol is "(unattributed)". */
	block(SIGN, HELPER + 0x40, 110);
	block(PUBLIC, SIGN + 0x20, 120);
	block(LEAF, PUBLIC + 0x10, 130);
	block(PUBLIC + 0x10, 0, 140);       /* leaf returned: 120..130 */
	block(SIGN + 0x20, 0, 150);         /* public returned: 110..140 */
	block(NO_SYMBOL, 0, 155);
	block(SIGN + 0x30, 0, 160);
	block(HELPER + 0x40, 0, 170);       /* sign returned */
	profile_free(prof);

	char lines[2][512] = {{0}};
	FILE *in = fopen(path, "r");
	CHECK(in != NULL);
	for (int i = 0; in && i < 2; i++)
		CHECK(fgets(lines[i], sizeof lines[i], in) != NULL);
	if (in)
		fclose(in);
	unlink(path);
	CHECK(strstr(lines[0], "\"start_cycle\": 20, \"cycles\": 70, \"blocks\": 8,") != NULL);
	CHECK(strstr(lines[0], "\"functions\": {\"sign\": [20, 1, 70], \"helper\": [35, 2, 50], "
			       "\"leaf\": [15, 1, 15]}}\n") != NULL);
	CHECK(strstr(lines[1], "\"start_cycle\": 100, \"cycles\": 60,") != NULL);
	CHECK(strstr(lines[1], "\"functions\": {\"sign\": [25, 1, 60], \"public\": [0, 1, 30], "
			       "\"(public-input functions)\": [30, 0, 30], \"leaf\": [0, 1, 10], "
			       "\"(unattributed)\": [5, 0, 5]}}\n") != NULL);
	if (failures)
		fprintf(stderr, "lines written:\n%s%s", lines[0], lines[1]);
}

/* The first line the profiler wrote to `path` (removed), into `line`. */
static void first_line(const char *path, char *line, int size)
{
	FILE *in = fopen(path, "r");
	CHECK(in != NULL);
	if (in) {
		CHECK(fgets(line, size, in) != NULL);
		fclose(in);
	}
	unlink(path);
}

static void test_a_stall_belongs_to_the_block_that_stalled(void)
{
	char path[] = "/tmp/vboard-profile-test-XXXXXX";
	start_profile(path, NULL);
	block(SIGN, MAIN + 0x10, 10);
	block(LEAF, SIGN + 0x10, 20);
	profile_stall(prof, 28);            /* leaf's last block waits 8 cycles (a division) */
	block(SIGN + 0x10, 0, 30);          /* leaf returned: its 18 cycles include the wait */
	block(MAIN + 0x10, 0, 40);          /* sign returned */
	profile_free(prof);

	char line[512] = {0};
	first_line(path, line, sizeof line);
	CHECK(strstr(line, "\"functions\": {\"sign\": [12, 1, 30], \"leaf\": [18, 1, 18]}}\n") != NULL);
	if (failures)
		fprintf(stderr, "line written:\n%s", line);
}

static void test_an_interrupt_is_the_handlers_time_and_the_interrupted_function_is_counted(void)
{
	char path[] = "/tmp/vboard-profile-test-XXXXXX";
	start_profile(path, NULL);
	block(SIGN, MAIN + 0x10, 10);
	block(LEAF, SIGN + 0x10, 20);
	block(HANDLER, EXC_RETURN, 32);     /* an interrupt in leaf: entry and the first block */
	block(HANDLER + 4, 0, 40);
	profile_exception_return(prof, 45, LEAF + 4); /* its return takes 5 cycles: the handler ran 20..45 */
	block(LEAF + 4, 0, 50);
	block(SIGN + 0x10, 0, 60);          /* leaf returned: 10..50, of which 25 the handler's */
	block(MAIN + 0x10, 0, 70);          /* sign returned: the interval (0..60) keeps them */
	profile_free(prof);

	char line[512] = {0};
	first_line(path, line, sizeof line);
	CHECK(strstr(line, "\"start_cycle\": 0, \"cycles\": 60,") != NULL);
	CHECK(strstr(line, "\"functions\": {\"sign\": [20, 1, 35], \"leaf\": [15, 1, 15, 1], "
			   "\"handler\": [25, 1, 25]}}\n") != NULL); /* leaf: interrupted once */
	if (failures)
		fprintf(stderr, "line written:\n%s", line);
}

int main(void)
{
	test_intervals_count_inclusive_time_of_activations_inside();
	test_a_stall_belongs_to_the_block_that_stalled();
	test_an_interrupt_is_the_handlers_time_and_the_interrupted_function_is_counted();
	return check_summary("profile tests");
}
