// A minimal JSON reader for tests: objects, arrays, numbers, strings (no
// escapes beyond \" and \\), true/false/null. Throws std::runtime_error on
// malformed input so a broken simulator output fails the test loudly.
#ifndef APERTURE_TESTS_SIM_MINI_JSON_H
#define APERTURE_TESTS_SIM_MINI_JSON_H

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mini_json {

struct Value {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  double number = 0;
  bool boolean = false;
  std::string str;
  std::vector<Value> items;
  std::map<std::string, Value> fields;

  const Value& operator[](const std::string& key) const {
    if (kind != kObject) throw std::runtime_error("not an object: " + key);
    auto it = fields.find(key);
    if (it == fields.end()) throw std::runtime_error("missing key: " + key);
    return it->second;
  }
  const Value& operator[](size_t i) const {
    if (kind != kArray || i >= items.size())
      throw std::runtime_error("bad array index");
    return items[i];
  }
  bool has(const std::string& key) const {
    return kind == kObject && fields.count(key) > 0;
  }
  double num() const {
    if (kind != kNumber) throw std::runtime_error("not a number");
    return number;
  }
  size_t size() const { return kind == kArray ? items.size() : fields.size(); }
};

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}
  Value Parse() {
    Value v = ParseValue();
    Skip();
    if (i_ != s_.size()) Fail("trailing text");
    return v;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) {
    throw std::runtime_error("json: " + what + " at offset " +
                             std::to_string(i_));
  }
  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
      i_++;
  }
  bool Eat(char c) {
    Skip();
    if (i_ < s_.size() && s_[i_] == c) {
      i_++;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) Fail(std::string("expected '") + c + "'");
  }
  std::string ParseString() {
    Expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) i_++;
      out += s_[i_++];
    }
    Expect('"');
    return out;
  }
  Value ParseValue() {
    Skip();
    Value v;
    if (i_ >= s_.size()) Fail("unexpected end");
    char c = s_[i_];
    if (c == '{') {
      v.kind = Value::kObject;
      i_++;
      if (Eat('}')) return v;
      do {
        Skip();
        std::string key = ParseString();
        Expect(':');
        v.fields[key] = ParseValue();
      } while (Eat(','));
      Expect('}');
    } else if (c == '[') {
      v.kind = Value::kArray;
      i_++;
      if (Eat(']')) return v;
      do {
        v.items.push_back(ParseValue());
      } while (Eat(','));
      Expect(']');
    } else if (c == '"') {
      v.kind = Value::kString;
      v.str = ParseString();
    } else if (s_.compare(i_, 4, "true") == 0) {
      v.kind = Value::kBool;
      v.boolean = true;
      i_ += 4;
    } else if (s_.compare(i_, 5, "false") == 0) {
      v.kind = Value::kBool;
      i_ += 5;
    } else if (s_.compare(i_, 4, "null") == 0) {
      i_ += 4;
    } else {
      const char* start = s_.c_str() + i_;
      char* end = nullptr;
      v.number = std::strtod(start, &end);
      if (end == start) Fail("bad value");
      v.kind = Value::kNumber;
      i_ += static_cast<size_t>(end - start);
    }
    return v;
  }
  const std::string& s_;
  size_t i_ = 0;
};

inline Value Parse(const std::string& text) { return Parser(text).Parse(); }

}  // namespace mini_json

#endif  // APERTURE_TESTS_SIM_MINI_JSON_H
