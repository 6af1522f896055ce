#include <pqscope/fault.h>

void pqs_fault_message(char out[PQS_FAULT_MESSAGE_BYTES], const char *kind, uint32_t pc)
{
  static const char suffix[] = " at pc=0x";
  static const char hex[] = "0123456789abcdef";
  size_t room = PQS_FAULT_MESSAGE_BYTES - (sizeof suffix - 1) - 8 - 1;
  size_t n = 0;
  while (kind[n] != '\0' && n < room) {
    out[n] = kind[n];
    n++;
  }
  for (size_t i = 0; i < sizeof suffix - 1; i++) {
    out[n++] = suffix[i];
  }
  for (int shift = 28; shift >= 0; shift -= 4) {
    out[n++] = hex[(pc >> shift) & 0xFu];
  }
  out[n] = '\0';
}
