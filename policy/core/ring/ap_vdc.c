/* ap_vdc: binary Van der Corput values by 32-bit reversal. */
#include "policy/core/ring/ap_vdc.h"

uint32_t ap_vdc_bits(uint32_t i) {
  uint32_t r = i;
  r = ((r >> 1) & 0x55555555u) | ((r & 0x55555555u) << 1);
  r = ((r >> 2) & 0x33333333u) | ((r & 0x33333333u) << 2);
  r = ((r >> 4) & 0x0F0F0F0Fu) | ((r & 0x0F0F0F0Fu) << 4);
  r = ((r >> 8) & 0x00FF00FFu) | ((r & 0x00FF00FFu) << 8);
  return (r >> 16) | (r << 16);
}

double ap_vdc(uint32_t i) {
  /* A 32-bit integer fits a double's 53-bit mantissa, and scaling by a
   * power of two is exact. */
  return (double)ap_vdc_bits(i) * 0x1.0p-32;
}
