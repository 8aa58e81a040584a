// The wall around policy/lb/grpc_seam, as a check on source text: which
// gRPC headers and names a room of policy/lb (any folder but the seam) may
// use. The allowed internal headers are the "api:" lines of grpc_seam.h's
// comment; the names kept behind the seam are in seam_wall.cc's table.
#ifndef APERTURE_TESTS_LB_GRPC_SEAM_SEAM_WALL_H
#define APERTURE_TESTS_LB_GRPC_SEAM_SEAM_WALL_H

#include <set>
#include <string>
#include <vector>

namespace seam_wall {

// One breach: its 1-based line and what it is, with what to use instead.
struct Breach {
  int line;
  std::string what;
};

// The headers on the "// api: <path>" lines of `seam_header` (the text of
// grpc_seam.h), in their order.
std::vector<std::string> ApiHeaders(const std::string& seam_header);

// `source` (C or C++) with its comments blanked: every other character,
// string literals included, stays where it was, so lines keep their numbers
// and columns.
std::string WithoutComments(const std::string& source);

// The breaches in one file's text: an #include of a gRPC internal header
// (a path under src/) not in `api`, a name that only the seam may use, or a
// string literal that spells a "grpc." channel-arg name. Comments do not
// count.
std::vector<Breach> FindBreaches(const std::string& source,
                                 const std::set<std::string>& api);

}  // namespace seam_wall

#endif  // APERTURE_TESTS_LB_GRPC_SEAM_SEAM_WALL_H
