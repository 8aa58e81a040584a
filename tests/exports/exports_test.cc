// libaperture.so (//policy:libaperture.so, for LD_PRELOAD and dlopen) must
// export the public C API and nothing else: a program that preloads it must
// not bind its own protobuf-c, gRPC or absl symbols to the library's copies,
// and the library's internals are not an interface. The test reads the
// ELF dynamic symbol table itself (no binutils) and compares the defined
// symbols with the functions aperture.h declares.
#include <elf.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  if (srcdir && ws) return std::string(srcdir) + "/" + ws + "/" + path;
  return path;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Symbol {
  std::string name;
  unsigned bind, type;
};

// The defined symbols of a 64-bit little-endian ELF file's .dynsym (every
// entry whose section index is not SHN_UNDEF, the null entry excluded).
// Fails the test on anything that is not such a file.
std::vector<Symbol> DefinedDynamicSymbols(const std::string& image) {
  std::vector<Symbol> out;
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(image.data());
  if (image.size() < sizeof(Elf64_Ehdr) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
    ADD_FAILURE() << "not a 64-bit little-endian ELF file";
    return out;
  }
  if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
      eh->e_shoff + static_cast<uint64_t>(eh->e_shnum) * sizeof(Elf64_Shdr) > image.size()) {
    ADD_FAILURE() << "no readable section header table";
    return out;
  }
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(image.data() + eh->e_shoff);
  int dynsyms = 0;
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_DYNSYM) continue;
    dynsyms++;
    if (sh[i].sh_link >= eh->e_shnum || sh[i].sh_entsize != sizeof(Elf64_Sym) ||
        sh[i].sh_offset + sh[i].sh_size > image.size()) {
      ADD_FAILURE() << "malformed .dynsym";
      return out;
    }
    const Elf64_Shdr& strtab = sh[sh[i].sh_link];
    if (strtab.sh_offset + strtab.sh_size > image.size()) {
      ADD_FAILURE() << "malformed .dynstr";
      return out;
    }
    const char* names = image.data() + strtab.sh_offset;
    const auto* syms = reinterpret_cast<const Elf64_Sym*>(image.data() + sh[i].sh_offset);
    const size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
    for (size_t k = 1; k < n; k++) {
      if (syms[k].st_shndx == SHN_UNDEF) continue;
      if (syms[k].st_name >= strtab.sh_size) {
        ADD_FAILURE() << "symbol " << k << " has no name in .dynstr";
        continue;
      }
      out.push_back({std::string(names + syms[k].st_name), ELF64_ST_BIND(syms[k].st_info),
                     ELF64_ST_TYPE(syms[k].st_info)});
    }
  }
  EXPECT_EQ(dynsyms, 1) << "dynamic symbol tables";
  return out;
}

// The functions aperture.h declares (APERTURE_API ... aperture_name(...)).
std::set<std::string> DeclaredFunctions(const std::string& header) {
  static const std::regex kDecl("APERTURE_API[^;{(]*\\b(aperture_[a-z0-9_]+)\\s*\\(");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), kDecl);
       it != std::sregex_iterator(); ++it) {
    out.insert((*it)[1].str());
  }
  return out;
}

TEST(LibapertureExports, OnlyTheFunctionsOfApertureH) {
  const std::string image = Slurp(Runfile("policy/libaperture.so"));
  ASSERT_GT(image.size(), 0u) << "libaperture.so not in the runfiles";
  const std::set<std::string> declared = DeclaredFunctions(Slurp(Runfile("policy/include/aperture.h")));
  // The public API as the header stands: registration, coordinate, status.
  ASSERT_GE(declared.size(), 10u);
  ASSERT_EQ(declared.count("aperture_register"), 1u);
  ASSERT_EQ(declared.count("aperture_status_server_start"), 1u);

  std::set<std::string> exported;
  for (const Symbol& s : DefinedDynamicSymbols(image)) {
    exported.insert(s.name);
    // aperture_ and a lowercase letter: not aperture__v1__* (protobuf-c)
    const bool api_name = s.name.rfind("aperture_", 0) == 0 && s.name.size() > 9 &&
                          s.name[9] >= 'a' && s.name[9] <= 'z';
    EXPECT_TRUE(api_name) << "libaperture.so exports " << s.name;
    EXPECT_EQ(s.type, static_cast<unsigned>(STT_FUNC)) << s.name << " is not a function";
    EXPECT_EQ(s.bind, static_cast<unsigned>(STB_GLOBAL)) << s.name;
  }
  EXPECT_EQ(exported, declared);
}

}  // namespace
