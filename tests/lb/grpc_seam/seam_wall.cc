#include "tests/lb/grpc_seam/seam_wall.h"

#include <ctype.h>

namespace seam_wall {
namespace {

// A name only the seam may use, and what the rooms use instead.
struct SeamName {
  const char* name;
  enum Match {
    kExact,         // the whole word
    kPrefix,        // a word that starts with it
    kWithin,        // a word that contains it (ExecCtxScope)
    kAfterGrpcCore  // the word right after "grpc_core::"
  } match;
  const char* instead;
};

// gRPC's machinery beyond the LB-policy API (grpc_seam.h items 2 to 6).
// grpc_pollset_set itself is not here: the LB-policy API's watchers return
// one (interested_parties()); only the functions that make or change one are.
const SeamName kSeamNames[] = {
    {"ExecCtx", SeamName::kWithin, "RunInGrpcContext()"},
    {"grpc_timer", SeamName::kPrefix, "SerializedTimer or PeriodicTimer"},
    {"grpc_closure", SeamName::kExact, "SerializedTimer or PeriodicTimer"},
    {"GRPC_CLOSURE_", SeamName::kPrefix, "SerializedTimer or PeriodicTimer"},
    {"EventEngine", SeamName::kExact, "SerializedTimer or PeriodicTimer"},
    {"Timestamp", SeamName::kAfterGrpcCore, "MonotonicNowMs()"},
    {"Duration", SeamName::kAfterGrpcCore, "MonotonicNowMs()"},
    {"ConnectivityStateName", SeamName::kExact, "StateText()"},
    {"CoreConfiguration", SeamName::kExact,
     "AddPolicyRegistryBuilder(), CoreConfigurationBuilt()"},
    {"TraceFlag", SeamName::kExact, "APERTURE_TRACE"},
    {"GRPC_TRACE_FLAG_ENABLED", SeamName::kExact, "APERTURE_TRACE"},
    {"ResolverRegistry", SeamName::kExact, "TargetResolver"},
    {"resolver_registry", SeamName::kExact, "IsResolvableTarget()"},
    {"Resolver", SeamName::kAfterGrpcCore, "TargetResolver"},
    {"grpc_pollset", SeamName::kExact, "TargetResolver"},
    {"grpc_pollset_set_", SeamName::kPrefix, "TargetResolver"},
    {"grpc_sockaddr", SeamName::kPrefix, "AddressText()"},
    {"ServerAddressWeightAttribute", SeamName::kExact, "ResolverWeight()"},
};

// What each character of a source is.
enum class Kind : char { kCode, kComment, kLiteral };

bool IsWordChar(char c) {
  return isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::vector<Kind> Classify(const std::string& s) {
  std::vector<Kind> kinds(s.size(), Kind::kCode);
  size_t i = 0;
  bool in_number = false;  // 1'000: the quote is a digit separator
  while (i < s.size()) {
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '/' && (next == '/' || next == '*')) {
      const bool line = next == '/';
      size_t end = line ? s.find('\n', i) : s.find("*/", i + 2);
      end = end == std::string::npos ? s.size() : end + (line ? 0 : 2);
      for (size_t k = i; k < end; ++k) kinds[k] = Kind::kComment;
      i = end;
      in_number = false;
      continue;
    }
    if (c == '"' || (c == '\'' && !in_number)) {
      size_t end;
      if (c == '"' && i > 0 && s[i - 1] == 'R') {
        // Raw string R"delim( ... )delim": no escapes inside.
        const size_t open = s.find('(', i);
        end = std::string::npos;
        std::string close;
        if (open != std::string::npos) {
          close = ")" + s.substr(i + 1, open - i - 1) + "\"";
          end = s.find(close, open);
        }
        end = end == std::string::npos ? s.size() : end + close.size();
      } else {
        end = i + 1;
        while (end < s.size() && s[end] != c && s[end] != '\n') {
          end += s[end] == '\\' ? 2 : 1;
        }
        end = end < s.size() ? end + 1 : s.size();
      }
      for (size_t k = i; k < end; ++k) kinds[k] = Kind::kLiteral;
      i = end;
      in_number = false;
      continue;
    }
    if (IsWordChar(c) || c == '.') {
      if (i == 0 || !(IsWordChar(s[i - 1]) || s[i - 1] == '.' ||
                      s[i - 1] == '\'')) {
        in_number = isdigit(static_cast<unsigned char>(c)) != 0;
      }
    } else if (c != '\'') {
      in_number = false;
    }
    ++i;
  }
  return kinds;
}

// The path of an #include line ("" when the line is none).
std::string IncludedPath(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || (line[i] != '"' && line[i] != '<')) return "";
  const size_t end = line.find(line[i] == '"' ? '"' : '>', i + 1);
  if (end == std::string::npos) return "";
  return line.substr(i + 1, end - i - 1);
}

// The entry of kSeamNames that the word at source[begin, end) is, if any.
const SeamName* SeamNameAt(const std::string& source, size_t begin,
                           size_t end) {
  const std::string word = source.substr(begin, end - begin);
  static const std::string kGrpcCore = "grpc_core::";
  const bool after_grpc_core =
      begin >= kGrpcCore.size() &&
      source.compare(begin - kGrpcCore.size(), kGrpcCore.size(), kGrpcCore) ==
          0;
  for (const SeamName& n : kSeamNames) {
    switch (n.match) {
      case SeamName::kExact:
        if (word == n.name) return &n;
        break;
      case SeamName::kPrefix:
        if (word.rfind(n.name, 0) == 0) return &n;
        break;
      case SeamName::kWithin:
        if (word.find(n.name) != std::string::npos) return &n;
        break;
      case SeamName::kAfterGrpcCore:
        if (after_grpc_core && word == n.name) return &n;
        break;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> ApiHeaders(const std::string& seam_header) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < seam_header.size()) {
    size_t end = seam_header.find('\n', start);
    if (end == std::string::npos) end = seam_header.size();
    const std::string line = seam_header.substr(start, end - start);
    const std::string mark = "// api:";
    if (line.compare(0, mark.size(), mark) == 0) {
      const size_t b = line.find_first_not_of(" \t", mark.size());
      if (b != std::string::npos) {
        out.push_back(line.substr(b, line.find_first_of(" \t", b) - b));
      }
    }
    start = end + 1;
  }
  return out;
}

std::string WithoutComments(const std::string& source) {
  const std::vector<Kind> kinds = Classify(source);
  std::string out = source;
  for (size_t i = 0; i < out.size(); ++i) {
    if (kinds[i] == Kind::kComment && out[i] != '\n') out[i] = ' ';
  }
  return out;
}

std::vector<Breach> FindBreaches(const std::string& source,
                                 const std::set<std::string>& api) {
  const std::vector<Kind> kinds = Classify(source);
  const std::string code = WithoutComments(source);
  std::vector<Breach> out;
  int line = 0;
  size_t begin = 0;
  while (begin < source.size()) {
    ++line;
    size_t end = source.find('\n', begin);
    if (end == std::string::npos) end = source.size();
    const std::string path = IncludedPath(code.substr(begin, end - begin));
    if (path.rfind("src/", 0) == 0 && api.count(path) == 0) {
      out.push_back({line, "includes \"" + path +
                               "\", a gRPC internal header not on "
                               "grpc_seam.h's api: list"});
    }
    for (size_t i = begin; i < end; ++i) {
      // Only where a literal or a word starts.
      const bool starts =
          i == begin || kinds[i - 1] != kinds[i] ||
          (kinds[i] == Kind::kCode && !IsWordChar(source[i - 1]));
      if (!starts) continue;
      if (kinds[i] == Kind::kLiteral && source.compare(i, 6, "\"grpc.") == 0) {
        const size_t close = source.find('"', i + 1);
        out.push_back({line, "spells the channel arg " +
                                 source.substr(i, close + 1 - i) +
                                 " by hand; use GRPC_ARG_* from <grpc/...> "
                                 "or the seam (e.g. ChannelTargetUri())"});
      } else if (kinds[i] == Kind::kCode && IsWordChar(source[i])) {
        size_t word_end = i;
        while (word_end < end && IsWordChar(source[word_end])) ++word_end;
        const SeamName* n = SeamNameAt(source, i, word_end);
        if (n != nullptr) {
          out.push_back({line, "names " + source.substr(i, word_end - i) +
                                   ", which only grpc_seam may use; use " +
                                   n->instead});
        }
        i = word_end - 1;
      }
    }
    begin = end + 1;
  }
  return out;
}

}  // namespace seam_wall
