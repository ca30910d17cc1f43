// CSV (RFC 4180 quoting, LF line ends) for spreadsheets and pandas: one row per buffer of every
// module for `report`, one row per changed buffer key for `diff`. Sizes are
// exact bytes.
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/report/writers.h"

namespace hlomem::report {
namespace {

void AppendField(absl::string_view text, std::string* out) {
  if (text.find_first_of(",\"\r\n") == absl::string_view::npos) {
    out->append(text.data(), text.size());
    return;
  }
  out->push_back('"');
  for (char c : text) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

// Views, not copies: a big module's report has 10^5 rows of 16 fields.
void AppendRecord(std::initializer_list<absl::string_view> fields, std::string* out) {
  bool first = true;
  for (absl::string_view f : fields) {
    if (!first) out->push_back(',');
    first = false;
    AppendField(f, out);
  }
  out->push_back('\n');
}

}  // namespace

std::string WriteCsv(const Report& report) {
  std::string out;
  AppendRecord({"module", "instruction", "shape_index", "opcode", "shape", "bytes", "kind",
                "allocation", "offset", "live_start", "live_end", "live_at_peak", "op_name",
                "op_type", "source_file", "source_line", "memory_space"},
               &out);
  for (const ModuleReport& m : report.modules) {
    const std::vector<bool> at_peak = AtPeakMask(m);
    for (size_t k = 0; k < m.rows.size(); ++k) {
      const BufferRow& r = m.rows[k];
      AppendRecord({m.name, r.instruction, absl::StrCat("{", absl::StrJoin(r.shape_index, ","), "}"),
                    r.opcode, r.shape, absl::StrCat(r.bytes), r.kind, absl::StrCat(r.allocation),
                    absl::StrCat(r.offset), absl::StrCat(r.start), absl::StrCat(r.end),
                    at_peak[k] ? "1" : "0", r.op_name, r.op_type, r.source_file,
                    r.source_line > 0 ? absl::StrCat(r.source_line) : "", r.memory_space},
                   &out);
    }
  }
  return out;
}

std::string WriteDiffCsv(const DiffReport& diff) {
  std::string out;
  AppendRecord({"module", "change", "delta_bytes", "bytes_a", "bytes_b", "count_a", "count_b",
                "kind", "shape", "op_name", "source", "at_peak_b"},
               &out);
  for (const ModuleDiff& d : diff.modules) {
    for (const BufferChange& c : d.changes) {
      AppendRecord({d.name, ChangeKindName(c.change), absl::StrCat(c.delta()),
                    absl::StrCat(c.bytes_a), absl::StrCat(c.bytes_b), absl::StrCat(c.count_a),
                    absl::StrCat(c.count_b), c.kind, c.shape, c.op_name, c.source,
                    c.at_peak_b ? "1" : "0"},
                   &out);
    }
  }
  return out;
}

}  // namespace hlomem::report
