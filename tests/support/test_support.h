/* What a test program needs from its platform: set-up before the tests and an end after them
 * (return on the host; stop in a loop on a board, which the virtual board reports as a halt). */
#ifndef PQSCOPE_TEST_SUPPORT_H
#define PQSCOPE_TEST_SUPPORT_H

void pqs_test_setup(void);
int pqs_test_finish(int failures);

#endif
