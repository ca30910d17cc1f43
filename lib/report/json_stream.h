// Writes JSON straight into a string, in exactly the bytes nlohmann's
// dump(indent) would produce for the same document, without building the
// document first. A 1 GB module's report has 10^5 buffer rows; as a DOM
// they cost seconds and hundreds of MB, streamed they cost the output.
//
// Small, rarely written values (numbers blocks, findings) can still be
// built as nlohmann values and handed to Value(); they are re-indented to
// where they land.
#ifndef HLOMEM_LIB_REPORT_JSON_STREAM_H_
#define HLOMEM_LIB_REPORT_JSON_STREAM_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace hlomem::report {

class JsonStream {
 public:
  // indent < 0: one line, as nlohmann's dump(-1).
  JsonStream(std::string* out, int indent) : out_(out), indent_(indent) {}

  // Hands the text written so far to `sink` and clears `out` whenever it
  // holds `chunk` bytes or more between two values, so a large document is
  // written as it is made, not held whole; Flush() hands over the rest.
  void SetSink(std::function<void(absl::string_view)> sink, size_t chunk) {
    sink_ = std::move(sink);
    chunk_ = chunk;
  }
  void Flush() {
    if (sink_ && !out_->empty()) sink_(*out_);
    out_->clear();
  }

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  // The key of the next value, inside an object.
  void Key(absl::string_view key);

  void Int(int64_t value);
  void Bool(bool value);
  void Null();
  void String(absl::string_view value);
  void Value(const nlohmann::ordered_json& value);

  template <typename T>
  void IntArray(const std::vector<T>& values) {
    BeginArray();
    for (const T& v : values) Int(static_cast<int64_t>(v));
    EndArray();
  }
  void StringArray(const std::vector<std::string>& values);

 private:
  void Open(char bracket);
  void Close(char bracket);
  // Separator and indentation before a value (nothing after a key).
  void BeforeValue();
  void Newline(size_t depth);
  void QuotedString(absl::string_view value);

  std::string* out_;
  int indent_;
  std::vector<bool> has_items_;  // per open container
  bool after_key_ = false;
  std::function<void(absl::string_view)> sink_;
  size_t chunk_ = 0;
};

}  // namespace hlomem::report

#endif  // HLOMEM_LIB_REPORT_JSON_STREAM_H_
