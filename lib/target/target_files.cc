#include "lib/target/target_files.h"

#include <cctype>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/diagnostic.h"

namespace hlomem::target {
namespace {

// Nesting deeper than this is not a target file; refusing it keeps the
// reader's stack and memory bounded on hostile input.
constexpr size_t kMaxDepth = 64;

class TextProtoReader {
 public:
  TextProtoReader(absl::string_view path, absl::string_view text,
                  const std::function<void(const std::string&, const std::string&)>& field)
      : path_(path), text_(text), field_(field) {}

  absl::Status Read() {
    std::vector<std::string> names;
    std::vector<char> closers;
    for (;;) {
      SkipSpaceAndComments();
      if (pos_ >= text_.size()) {
        if (!closers.empty()) return Error("unterminated message: expected '}'");
        return absl::OkStatus();
      }
      const char c = text_[pos_];
      if (!closers.empty() && c == closers.back()) {
        ++pos_;
        closers.pop_back();
        names.pop_back();
        SkipSeparator();
        continue;
      }
      if (!IsIdentifierStart(c) && c != '[') return Error("expected a field name");
      std::string name = ReadFieldName();
      if (name.empty()) return Error("expected a field name");
      SkipSpaceAndComments();
      bool colon = false;
      if (pos_ < text_.size() && text_[pos_] == ':') {
        colon = true;
        ++pos_;
        SkipSpaceAndComments();
      }
      if (pos_ < text_.size() && (text_[pos_] == '{' || text_[pos_] == '<')) {
        if (closers.size() >= kMaxDepth) return Error("messages nested too deeply");
        closers.push_back(text_[pos_] == '{' ? '}' : '>');
        ++pos_;
        names.push_back(std::move(name));
        continue;
      }
      if (!colon) return Error("expected ':' or '{' after the field name");
      const std::string full = Join(names, name);
      if (pos_ < text_.size() && text_[pos_] == '[') {
        ++pos_;
        for (;;) {
          SkipSpaceAndComments();
          if (pos_ < text_.size() && text_[pos_] == ']') {
            ++pos_;
            break;
          }
          std::string value;
          absl::Status s = ReadScalar(&value);
          if (!s.ok()) return s;
          field_(full, value);
          SkipSpaceAndComments();
          if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
        }
      } else {
        std::string value;
        absl::Status s = ReadScalar(&value);
        if (!s.ok()) return s;
        field_(full, value);
      }
      SkipSeparator();
    }
  }

 private:
  static bool IsIdentifierStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
  }
  static bool IsIdentifierChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/';
  }

  static std::string Join(const std::vector<std::string>& names, const std::string& last) {
    std::string out;
    for (const std::string& n : names) absl::StrAppend(&out, n, ".");
    absl::StrAppend(&out, last);
    return out;
  }

  // A plain name, or an extension / Any type URL in brackets.
  std::string ReadFieldName() {
    const size_t start = pos_;
    if (text_[pos_] == '[') {
      const size_t close = text_.find(']', pos_);
      if (close == absl::string_view::npos) return "";
      pos_ = close + 1;
      return std::string(text_.substr(start, pos_ - start));
    }
    while (pos_ < text_.size() && IsIdentifierChar(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  absl::Status ReadScalar(std::string* value) {
    if (pos_ >= text_.size()) return Error("expected a value");
    const char c = text_[pos_];
    if (c == '"' || c == '\'') {
      // Adjacent string literals concatenate, as in protobuf's parser.
      while (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'')) {
        absl::Status s = ReadString(value);
        if (!s.ok()) return s;
        SkipSpaceAndComments();
      }
      return absl::OkStatus();
    }
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '-' ||
            text_[pos_] == '+' || text_[pos_] == '.' || text_[pos_] == '_')) {
      ++pos_;
    }
    if (pos_ == start) return Error("expected a value");
    *value = std::string(text_.substr(start, pos_ - start));
    return absl::OkStatus();
  }

  absl::Status ReadString(std::string* value) {
    const size_t open = pos_;
    const char quote = text_[pos_++];
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\n') return ErrorAtOffset(open, "unterminated string");
      if (c == '\\' && pos_ < text_.size()) {
        const char e = text_[pos_++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'a': c = '\a'; break;
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          case 'v': c = '\v'; break;
          case 'x':  // \xHH: protobuf's printer never writes it, its parser reads it
            c = static_cast<char>(ReadDigits(16, 2));
            break;
          default:
            if (e >= '0' && e <= '7') {
              // \NNN: how protobuf's printer writes bytes outside printable
              // ASCII, UTF-8 included.
              --pos_;
              c = static_cast<char>(ReadDigits(8, 3));
            } else {
              c = e;  // \" \\ \' \? and the rest stand for themselves
            }
            break;
        }
      }
      value->push_back(c);
    }
    if (pos_ >= text_.size()) return ErrorAtOffset(open, "unterminated string");
    ++pos_;
    return absl::OkStatus();
  }

  // Up to `max_digits` digits in `base` (8 or 16) at pos_, as a number.
  int ReadDigits(int base, int max_digits) {
    int value = 0;
    for (int n = 0; n < max_digits && pos_ < text_.size(); ++n) {
      const char d = text_[pos_];
      int digit;
      if (d >= '0' && d <= '7') {
        digit = d - '0';
      } else if (base == 16 && std::isxdigit(static_cast<unsigned char>(d))) {
        digit = std::isdigit(static_cast<unsigned char>(d)) ? d - '0' : (d | 0x20) - 'a' + 10;
      } else {
        break;
      }
      value = value * base + digit;
      ++pos_;
    }
    return value;
  }

  void SkipSpaceAndComments() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else {
        return;
      }
    }
  }

  void SkipSeparator() {
    SkipSpaceAndComments();
    if (pos_ < text_.size() && (text_[pos_] == ',' || text_[pos_] == ';')) ++pos_;
  }

  absl::Status Error(absl::string_view message) const { return ErrorAtOffset(pos_, message); }
  absl::Status ErrorAtOffset(size_t offset, absl::string_view message) const {
    return ErrorAt(path_, text_, offset, message);
  }

  absl::string_view path_;
  absl::string_view text_;
  const std::function<void(const std::string&, const std::string&)>& field_;
  size_t pos_ = 0;
};

}  // namespace

absl::Status ForEachTextProtoField(
    absl::string_view path, absl::string_view text,
    const std::function<void(const std::string& field, const std::string& value)>& field) {
  return TextProtoReader(path, text, field).Read();
}

}  // namespace hlomem::target
