/*
 * ap_vdc: the binary Van der Corput low-discrepancy sequence: write i in
 * binary, mirror the bits around the binary point. vdc(0)=0, vdc(1)=0.5,
 * vdc(2)=0.25, vdc(3)=0.75, ... Each new point lands in a largest gap.
 */
#ifndef AP_VDC_H
#define AP_VDC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The i-th value of the sequence, in [0, 1); exact (i has 32 bits). */
double ap_vdc(uint32_t i);

/* The 32 bits of i in reverse order: ap_vdc(i) == ap_vdc_bits(i) / 2^32, so
 * sorting by ap_vdc_bits() sorts by position with integer comparisons. */
uint32_t ap_vdc_bits(uint32_t i);

#ifdef __cplusplus
}
#endif

#endif /* AP_VDC_H */
