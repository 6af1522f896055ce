/* The device's entry point: the harness (harness.c) fed from the board's UART. */
#include <pqscope/hal.h>
#include <pqscope/harness.h>

int main(void)
{
  hal_setup();
  pqs_harness_start();
  for (;;) {
    pqs_harness_receive_byte(hal_getc());
  }
}
