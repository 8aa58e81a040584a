// A client-side probe of the ORCA trailer as it arrives: gRPC C-core
// (1.51) parses `endpoint-load-metrics-bin` into its own metadata trait
// and does not hand it to the application, so the tests read it with a
// filter on the subchannel stack that keeps the raw bytes of the last one
// seen. Install before grpc_init().
#ifndef APERTURE_TESTS_INTEROP_ORCA_PROBE_H
#define APERTURE_TESTS_INTEROP_ORCA_PROBE_H

#include <string>

// Registers the filter with gRPC's core configuration. Call once, before
// grpc_init() and before any channel exists.
void OrcaProbeInstall();

// Trailers seen so far, and the raw bytes of the last one ("" when none).
long OrcaProbeCount();
std::string OrcaProbeLast();

// Parses a serialized OrcaLoadReport with gRPC's own parser (the one whose
// result LB policies get) and stores its cpu_utilization. 0, or -1 when
// gRPC rejects the bytes.
int OrcaProbeGrpcParse(const std::string &bytes, double *cpu_utilization);

#endif
