/* Unity configuration for pqscope's C tests, on the host and on boards. */
#ifndef PQSCOPE_UNITY_CONFIG_H
#define PQSCOPE_UNITY_CONFIG_H

#define UNITY_SUPPORT_64
#define UNITY_INCLUDE_DOUBLE

#ifdef PQSCOPE_ON_BOARD
/* On a board, results go out on the UART; the virtual board forwards it to stdout. */
#include <pqscope/hal.h>
#define UNITY_OUTPUT_CHAR(c) hal_putc((uint8_t)(c))
#endif

#endif
