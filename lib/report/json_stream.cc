#include "lib/report/json_stream.h"

#include "absl/strings/str_cat.h"

namespace hlomem::report {

void JsonStream::Newline(size_t depth) {
  if (indent_ < 0) return;
  out_->push_back('\n');
  out_->append(depth * static_cast<size_t>(indent_), ' ');
}

void JsonStream::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (sink_ && out_->size() >= chunk_) Flush();
  if (has_items_.empty()) return;  // the document's top value
  if (has_items_.back()) out_->push_back(',');
  has_items_.back() = true;
  Newline(has_items_.size());
}

void JsonStream::Key(absl::string_view key) {
  BeforeValue();
  QuotedString(key);
  out_->append(indent_ < 0 ? ":" : ": ");
  after_key_ = true;
}

void JsonStream::Open(char bracket) {
  BeforeValue();
  out_->push_back(bracket);
  has_items_.push_back(false);
}

void JsonStream::Close(char bracket) {
  const bool had_items = has_items_.back();
  has_items_.pop_back();
  if (had_items) Newline(has_items_.size());  // empty containers print as {} and []
  out_->push_back(bracket);
}

void JsonStream::Int(int64_t value) {
  BeforeValue();
  absl::StrAppend(out_, value);
}

void JsonStream::Bool(bool value) {
  BeforeValue();
  out_->append(value ? "true" : "false");
}

void JsonStream::Null() {
  BeforeValue();
  out_->append("null");
}

void JsonStream::String(absl::string_view value) {
  BeforeValue();
  QuotedString(value);
}

void JsonStream::StringArray(const std::vector<std::string>& values) {
  BeginArray();
  for (const std::string& v : values) String(v);
  EndArray();
}

void JsonStream::QuotedString(absl::string_view value) {
  // Printable ASCII without quote or backslash needs no escaping; anything
  // else goes through nlohmann, so escapes and the replacement of invalid
  // UTF-8 stay byte-identical to a DOM dump.
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') {
      out_->append(nlohmann::ordered_json(std::string(value))
                       .dump(-1, ' ', /*ensure_ascii=*/false,
                             nlohmann::ordered_json::error_handler_t::replace));
      return;
    }
  }
  out_->push_back('"');
  out_->append(value.data(), value.size());
  out_->push_back('"');
}

void JsonStream::Value(const nlohmann::ordered_json& value) {
  BeforeValue();
  const std::string text =
      value.dump(indent_, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace);
  if (indent_ < 0) {
    out_->append(text);
    return;
  }
  // Dumped at depth 0; every line after the first moves to this depth.
  // (Strings in the dump hold no raw newline: nlohmann escapes them.)
  const std::string pad(has_items_.size() * static_cast<size_t>(indent_), ' ');
  for (const char c : text) {
    out_->push_back(c);
    if (c == '\n') out_->append(pad);
  }
}

}  // namespace hlomem::report
