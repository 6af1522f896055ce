/* The emulator's C unit tests: CHECK counts a failed condition and goes on, so that one run
 * reports every failure; check_summary prints the count and gives main() its exit code. */
#ifndef VBOARD_CHECK_H
#define VBOARD_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                           \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);       \
			failures++;                                                           \
		}                                                                             \
	} while (0)

static inline int check_summary(const char *what)
{
	printf(failures ? "%s: %d FAILED\n" : "%s: all passed\n", what, failures);
	return failures != 0;
}

#endif
