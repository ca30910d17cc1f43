// The JSON form of reports and diffs, and reading a report back (a baseline).
// The keys in lib/report/report.schema.json are a contract: fields may be
// added, never renamed. All sizes are integer bytes.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/report/json_stream.h"
#include "lib/report/writers.h"
#include "nlohmann/json.hpp"

namespace hlomem::report {
namespace {

using Json = nlohmann::ordered_json;

// An optional integer: its value or null.
Json IntOrNull(const std::optional<int64_t>& value) { return value ? Json(*value) : Json(nullptr); }

Json Numbers(const MemoryNumbers& n, const bool* exact) {
  Json j;
  j["total_bytes"] = n.total_bytes;
  j["argument_bytes"] = n.argument_bytes;
  j["output_bytes"] = n.output_bytes;
  j["alias_bytes"] = n.alias_bytes;
  j["temp_bytes"] = n.temp_bytes;
  if (n.peak_live_bytes) j["peak_live_bytes"] = *n.peak_live_bytes;
  if (n.fragmentation_bytes) j["fragmentation_bytes"] = *n.fragmentation_bytes;
  if (exact) j["exact"] = *exact;
  j["constant_bytes"] = n.constant_bytes;
  j["thread_local_bytes"] = n.thread_local_bytes;
  if (n.peak_memory_bytes) j["peak_memory_bytes"] = *n.peak_memory_bytes;
  j["host_argument_bytes"] = n.host_argument_bytes;
  j["host_output_bytes"] = n.host_output_bytes;
  j["host_alias_bytes"] = n.host_alias_bytes;
  j["host_temp_bytes"] = n.host_temp_bytes;
  return j;
}

Json Source(const std::string& file, int64_t line) {
  if (file.empty()) return nullptr;
  return {{"file", file}, {"line", line}};
}

void WriteBuffer(const BufferRow& r, JsonStream* out) {
  out->BeginObject();
  out->Key("instruction");
  out->String(r.instruction);
  out->Key("shape_index");
  out->IntArray(r.shape_index);
  out->Key("opcode");
  out->String(r.opcode);
  out->Key("shape");
  out->String(r.shape);
  out->Key("bytes");
  out->Int(r.bytes);
  out->Key("kind");
  out->String(r.kind);
  out->Key("allocation");
  out->Int(r.allocation);
  out->Key("memory_space");
  out->String(r.memory_space);
  out->Key("offset");
  out->Int(r.offset);
  out->Key("live_range");
  if (r.start >= 0) {
    out->BeginObject();
    out->Key("start");
    out->Int(r.start);
    out->Key("end");
    out->Int(r.end);
    out->EndObject();
  } else {
    out->Null();
  }
  out->Key("op_name");
  out->String(r.op_name);
  out->Key("op_type");
  out->String(r.op_type);
  // Streamed like Source() builds it: one object per row is most of a big
  // report's write time otherwise.
  out->Key("source");
  if (r.source_file.empty()) {
    out->Null();
  } else {
    out->BeginObject();
    out->Key("file");
    out->String(r.source_file);
    out->Key("line");
    out->Int(r.source_line);
    out->EndObject();
  }
  out->Key("stack_frame");
  out->Int(r.stack_frame);
  out->EndObject();
}

Json FindingJson(const detect::Finding& f) {
  Json j;
  j["detector"] = f.detector;
  j["severity"] = std::string(detect::SeverityName(f.severity));
  j["bytes"] = f.bytes;
  j["summary"] = detect::Summary(f);
  j["message"] = f.message;
  j["suggestion"] = f.suggestion;
  j["instructions"] = f.instructions;
  j["source"] = Source(f.source_file, f.source_line);
  j["op_name"] = f.op_name;
  return j;
}

Json Findings(const std::vector<detect::Finding>& findings) {
  Json j = Json::array();
  for (const detect::Finding& f : findings) j.push_back(FindingJson(f));
  return j;
}

Json DeviceFitJson(const DeviceFit& fit) {
  Json j;
  j["device"] = fit.device;
  j["capacity_bytes"] = fit.capacity;
  j["mem_fraction"] = fit.fraction;
  j["usable_bytes"] = fit.usable;
  j["usable_source"] = fit.usable_source;
  j["needed_bytes"] = fit.needed;
  j["needed_source"] = fit.needed_source;
  j["computed_needed_bytes"] = IntOrNull(fit.computed_needed);
  j["fits"] = fit.fits;
  j["shortfall_bytes"] = fit.shortfall;
  j["caveat"] = fit.caveat;
  j["capacity_source"] = fit.capacity_source;
  j["capacity_estimated"] = fit.capacity_estimated;
  j["usable_from_log"] = fit.usable_from_log;
  j["preset_usable_bytes"] = IntOrNull(fit.preset_usable);
  return j;
}

Json MemorySpacesJson(const std::vector<MemorySpaceTotals>& spaces) {
  Json j = Json::array();
  for (const MemorySpaceTotals& s : spaces) {
    Json space;
    space["color"] = s.color;
    space["name"] = s.name;
    space["is_device"] = s.is_device;
    space["is_host"] = s.is_host;
    space["computed_bytes"] = IntOrNull(s.computed_bytes);
    space["xla_bytes"] = IntOrNull(s.xla_bytes);
    j.push_back(std::move(space));
  }
  return j;
}

Json TargetDeviceJson(const target::DeviceMemory& device) {
  Json j;
  j["device"] = device.device;
  j["capacity_bytes"] = device.capacity;
  j["program_limit_bytes"] = IntOrNull(device.program_limit);
  j["limit_source"] = device.limit_source;
  return j;
}

Json OomJson(const OomExplanation& oom) {
  const dump::XlaOomError& e = oom.error;
  Json j;
  j["kind"] = std::string(dump::XlaOomKindName(e.kind));
  j["code"] = e.code;
  j["memory"] = e.memory;
  j["module"] = e.module_name;
  j["message"] = e.message;
  j["needed_bytes"] = IntOrNull(e.needed_bytes);
  j["available_bytes"] = IntOrNull(e.available_bytes);
  j["rounding_bytes"] = e.rounding_bytes;
  j["device_bytes"] = IntOrNull(oom.device_bytes);
  if (e.listing) {
    Json stats = Json::object();
    for (const auto& [name, bytes] : e.listing->stats) stats[name] = bytes;
    Json peak = Json::array();
    for (const dump::XlaOomListing::PeakBuffer& b : e.listing->peak_buffers) {
      peak.push_back({{"bytes", b.bytes}, {"label", b.label}, {"shape", b.shape}, {"op_name", b.op_name},
                      {"source", Source(b.source_file, b.source_line)},
                      {"entry_parameter", b.entry_parameter}});
    }
    j["listing"] = {{"stats", stats}, {"peak_buffers", peak}};
  } else {
    j["listing"] = nullptr;
  }
  j["device_bytes_source"] = oom.device_bytes_source;
  j["agrees"] = oom.agrees;
  j["matched_by"] = oom.matched_by;
  j["also_matching"] = oom.also_matching;
  if (e.allocator_limit) {
    j["allocator_limit"] = {{"bytes", e.allocator_limit->bytes},
                            {"rounding_bytes", e.allocator_limit->rounding_bytes},
                            {"source", dump::DescribeAllocatorLimit(*e.allocator_limit)},
                            {"message", e.allocator_limit->message}};
  } else {
    j["allocator_limit"] = nullptr;
  }
  return j;
}

Json RollupJson(const std::vector<RollupRow>& rows) {
  Json out = Json::array();
  for (const RollupRow& row : rows) out.push_back({{"key", row.key}, {"bytes", row.bytes}, {"buffers", row.buffers}});
  return out;
}

// Streamed: the buffer rows and the timeline are most of a big report.
void WriteModule(const ModuleReport& m, const WriteOptions& options, JsonStream* out) {
  out->BeginObject();
  out->Key("name");
  out->String(m.name);
  out->Key("files");
  out->StringArray(m.files);
  out->Key("backend");
  out->String(m.backend);
  out->Key("target");
  out->String(m.target);
  out->Key("target_device");
  out->Value(m.device ? TargetDeviceJson(*m.device) : Json(nullptr));
  out->Key("memory_spaces");
  out->Value(MemorySpacesJson(m.memory_spaces));
  out->Key("stage");
  out->String(m.stage);
  out->Key("scheduled");
  out->Bool(m.scheduled);
  out->Key("signature");
  m.signature.empty() ? out->Null() : out->String(m.signature);
  out->Key("instruction_count");
  m.instruction_count > 0 ? out->Int(m.instruction_count) : out->Null();
  out->Key("computed");
  if (m.computed) {
    Json computed = Numbers(*m.computed, &m.exact);
    if (!m.exact) computed["estimate_reason"] = m.estimate_reason;
    out->Value(computed);
  } else {
    out->Null();
  }
  out->Key("xla");
  out->Value(m.xla ? Numbers(*m.xla, nullptr) : Json(nullptr));
  out->Key("xla_incomplete");
  m.xla_incomplete.empty() ? out->Null() : out->String(m.xla_incomplete);
  Json mismatches = Json::array();
  for (const Mismatch& x : m.mismatches) {
    mismatches.push_back({{"field", x.field}, {"computed", x.computed}, {"xla", x.xla}});
  }
  out->Key("mismatches");
  out->Value(mismatches);
  out->Key("peak_step");
  m.computed ? out->Int(m.profile.peak_step) : out->Null();
  out->Key("schedule_length");
  m.computed ? out->Int(m.schedule_length) : out->Null();
  out->Key("peak_instruction");
  if (m.peak_instruction) {
    const PeakInstruction& p = *m.peak_instruction;
    out->Value(Json{{"instruction", p.instruction},
                    {"opcode", p.opcode},
                    {"op_name", p.op_name},
                    {"source", Source(p.source_file, p.source_line)}});
  } else {
    out->Null();
  }
  const std::vector<size_t> kept =
      KeptRows(m.rows.size(), m.profile.live_at_peak, options.json_max_buffers,
               [&](size_t k) { return m.rows[k].bytes; });
  out->Key("buffers");
  out->BeginArray();
  if (options.json_buffers) {
    for (size_t k : kept) WriteBuffer(m.rows[k], out);
  }
  out->EndArray();
  out->Key("live_at_peak");
  out->BeginArray();
  size_t live_written = 0;
  if (options.json_buffers) {
    // Indices into the rows written, largest first as before.
    for (size_t k : m.profile.live_at_peak) {
      const auto at = std::lower_bound(kept.begin(), kept.end(), k);
      if (at != kept.end() && *at == k) out->Int(at - kept.begin()), ++live_written;
    }
  }
  out->EndArray();
  // Made from every buffer live at the peak, so that they hold whatever
  // the rows above leave out.
  out->Key("peak_by_line");
  out->Value(RollupJson(RollupAtPeak(m, RollupKey::kSourceLine)));
  out->Key("peak_by_op");
  out->Value(RollupJson(RollupAtPeak(m, RollupKey::kOpName)));
  const std::vector<int64_t>& timeline = m.profile.timeline;
  const bool sampled = options.json_max_timeline > 0 && timeline.size() > options.json_max_timeline;
  const std::vector<size_t> steps =
      sampled ? DownsampleArgMax(timeline, options.json_max_timeline) : std::vector<size_t>{};
  out->Key("timeline");
  out->BeginArray();
  if (options.json_timeline) {
    if (sampled) {
      for (size_t step : steps) out->Int(timeline[step]);
    } else {
      for (int64_t bytes : timeline) out->Int(bytes);
    }
  }
  out->EndArray();
  out->Key("timeline_steps");
  if (sampled && options.json_timeline) {
    out->BeginArray();
    for (size_t step : steps) out->Int(static_cast<int64_t>(step));
    out->EndArray();
  } else {
    out->Null();
  }
  const int64_t buffers_total = std::max<int64_t>(m.buffers_total, static_cast<int64_t>(m.rows.size()));
  const int64_t live_total = static_cast<int64_t>(LiveAtPeakCount(m));
  const int64_t steps_total = std::max<int64_t>(m.timeline_total, static_cast<int64_t>(timeline.size()));
  const bool cut_rows = options.json_buffers && static_cast<int64_t>(kept.size()) < buffers_total;
  const bool cut_steps = options.json_timeline && (sampled || m.timeline_total > 0);
  out->Key("truncated");
  if (cut_rows || cut_steps) {
    Json truncated = Json::object();
    if (cut_rows) {
      truncated["buffers"] = {{"written", kept.size()}, {"total", buffers_total},
                              {"kept", "the largest live at the peak, and the largest of all"}};
      truncated["live_at_peak"] = {{"written", live_written}, {"total", live_total},
                                   {"kept", "the largest; peak_by_line and peak_by_op count them all"}};
    }
    if (cut_steps) {
      truncated["timeline"] = {{"written", sampled ? steps.size() : timeline.size()},
                               {"total", steps_total},
                               {"kept", "each span's highest step (timeline_steps), the peak among them"}};
    }
    out->Value(truncated);
  } else {
    out->Null();
  }
  out->Key("stack_frames");
  out->BeginArray();
  if (options.json_buffers) {
    for (const StackFrameRow& f : m.stack_frames) {
      out->Value(Json{{"file", f.file},
                      {"function", f.function},
                      {"line", f.line},
                      {"parent", f.parent},
                      {"library", f.library}});
    }
  }
  out->EndArray();
  out->Key("findings");
  out->Value(Findings(m.findings));
  out->Key("warnings");
  out->StringArray(m.warnings);
  out->Key("device_fit");
  out->Value(m.device_fit ? DeviceFitJson(*m.device_fit) : Json(nullptr));
  out->Key("oom_error");
  out->Value(m.oom ? OomJson(*m.oom) : Json(nullptr));
  out->EndObject();
}

std::string Dump(const Json& root, const WriteOptions& options) {
  return root.dump(options.json_indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace) +
         "\n";
}

// Reading ---------------------------------------------------------------

// A value where a report holds an integer that is not one: the file is not
// a report hlomem wrote. (A float would not convert safely: one past the
// range of int64_t is undefined behavior.) ReadJsonReport reports it.
struct NotAnInteger : std::runtime_error {
  NotAnInteger() : std::runtime_error("a number that should be an integer is not") {}
};

int64_t AsInt(const Json& v) {
  if (!v.is_number_integer()) throw NotAnInteger();
  return v.get<int64_t>();
}

std::vector<int64_t> AsInts(const Json& v) {
  if (!v.is_array()) throw NotAnInteger();
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (const Json& e : v) out.push_back(AsInt(e));
  return out;
}

// Throws nlohmann's type_error on a wrong type, NotAnInteger on a number
// that is not an integer; ReadJsonReport reports them.
int64_t IntOr(const Json& j, const char* key, int64_t fallback) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : AsInt(*it);
}

std::optional<int64_t> OptionalInt(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return AsInt(*it);
}

std::string StringOr(const Json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::string() : it->get<std::string>();
}

MemoryNumbers ReadNumbers(const Json& j) {
  MemoryNumbers n;
  n.total_bytes = IntOr(j, "total_bytes", 0);
  n.argument_bytes = IntOr(j, "argument_bytes", 0);
  n.output_bytes = IntOr(j, "output_bytes", 0);
  n.alias_bytes = IntOr(j, "alias_bytes", 0);
  n.temp_bytes = IntOr(j, "temp_bytes", 0);
  n.constant_bytes = IntOr(j, "constant_bytes", 0);
  n.thread_local_bytes = IntOr(j, "thread_local_bytes", 0);
  n.host_argument_bytes = IntOr(j, "host_argument_bytes", 0);
  n.host_output_bytes = IntOr(j, "host_output_bytes", 0);
  n.host_alias_bytes = IntOr(j, "host_alias_bytes", 0);
  n.host_temp_bytes = IntOr(j, "host_temp_bytes", 0);
  if (j.contains("peak_live_bytes")) n.peak_live_bytes = IntOr(j, "peak_live_bytes", 0);
  if (j.contains("fragmentation_bytes")) n.fragmentation_bytes = IntOr(j, "fragmentation_bytes", 0);
  if (j.contains("peak_memory_bytes")) n.peak_memory_bytes = IntOr(j, "peak_memory_bytes", 0);
  return n;
}

void ReadSource(const Json& j, std::string* file, int64_t* line) {
  auto it = j.find("source");
  if (it == j.end() || it->is_null()) return;
  *file = StringOr(*it, "file");
  *line = IntOr(*it, "line", 0);
}

// Its strings are kept in `pool`, which the module's report holds.
BufferRow ReadBuffer(const Json& j, StringPool* pool) {
  auto intern = [&](const char* key) { return pool->Intern(StringOr(j, key)); };
  BufferRow r;
  r.instruction = StringOr(j, "instruction");
  if (j.contains("shape_index")) r.shape_index = AsInts(j["shape_index"]);
  r.opcode = intern("opcode");
  r.shape = intern("shape");
  r.bytes = IntOr(j, "bytes", 0);
  r.kind = intern("kind");
  r.allocation = IntOr(j, "allocation", -1);
  r.memory_space = intern("memory_space");
  r.offset = IntOr(j, "offset", -1);
  auto range = j.find("live_range");
  if (range != j.end() && !range->is_null()) {
    r.start = IntOr(*range, "start", -1);
    r.end = IntOr(*range, "end", -1);
  }
  r.op_name = intern("op_name");
  r.op_type = intern("op_type");
  std::string source_file;
  ReadSource(j, &source_file, &r.source_line);
  r.source_file = pool->Intern(source_file);
  r.stack_frame = IntOr(j, "stack_frame", 0);
  return r;
}

detect::Finding ReadFinding(const Json& j) {
  detect::Finding f;
  f.detector = StringOr(j, "detector");
  const std::string severity = StringOr(j, "severity");
  f.severity = severity == "error"  ? detect::Severity::kError
               : severity == "info" ? detect::Severity::kInfo
                                    : detect::Severity::kWarning;
  f.bytes = IntOr(j, "bytes", 0);
  f.message = StringOr(j, "message");
  f.suggestion = StringOr(j, "suggestion");
  if (j.contains("instructions")) f.instructions = j["instructions"].get<std::vector<std::string>>();
  ReadSource(j, &f.source_file, &f.source_line);
  f.op_name = StringOr(j, "op_name");
  // A detector's own summary; one derived from the message stays derived.
  const std::string summary = StringOr(j, "summary");
  if (summary != detect::Summary(f)) f.summary = summary;
  return f;
}

// A module's buffer rows, read while the report was parsed (ReadJsonReport).
struct ReadRows {
  std::vector<BufferRow> rows;
  std::shared_ptr<StringPool> pool = std::make_shared<StringPool>();
};

// The longest timeline a report read back may ask for (1 GiB of steps):
// hlomem's schedules stay below 2^31 steps, and its default element limit
// keeps a module's far below this.
constexpr int64_t kMaxTimelineSteps = int64_t{1} << 27;

// Sets *error, and returns what it read so far, on a file no hlomem wrote.
ModuleReport ReadModule(const Json& j, ReadRows buffers, std::string* error) {
  ModuleReport m;
  m.name = StringOr(j, "name");
  if (j.contains("files")) m.files = j["files"].get<std::vector<std::string>>();
  m.backend = StringOr(j, "backend");
  m.target = StringOr(j, "target");
  auto spaces = j.find("memory_spaces");
  if (spaces != j.end() && spaces->is_array()) {
    for (const Json& space : *spaces) {
      MemorySpaceTotals t;
      t.color = IntOr(space, "color", 0);
      t.name = StringOr(space, "name");
      t.is_device = space.value("is_device", false);
      t.is_host = space.value("is_host", false);
      t.computed_bytes = OptionalInt(space, "computed_bytes");
      t.xla_bytes = OptionalInt(space, "xla_bytes");
      m.memory_spaces.push_back(std::move(t));
    }
  }
  m.stage = StringOr(j, "stage");
  m.scheduled = j.value("scheduled", false);
  m.signature = StringOr(j, "signature");
  m.instruction_count = IntOr(j, "instruction_count", 0);
  auto computed = j.find("computed");
  if (computed != j.end() && !computed->is_null()) {
    m.computed = ReadNumbers(*computed);
    m.exact = computed->value("exact", false);
    m.estimate_reason = StringOr(*computed, "estimate_reason");
    m.profile.peak_live_bytes = m.computed->peak_live_bytes.value_or(0);
    m.profile.fragmentation_bytes = m.computed->fragmentation_bytes.value_or(0);
  }
  auto xla = j.find("xla");
  if (xla != j.end() && !xla->is_null()) m.xla = ReadNumbers(*xla);
  auto xla_incomplete = j.find("xla_incomplete");
  if (xla_incomplete != j.end() && xla_incomplete->is_string()) {
    m.xla_incomplete = xla_incomplete->get<std::string>();
  }
  if (j.contains("mismatches")) {
    for (const Json& x : j["mismatches"]) {
      m.mismatches.push_back({StringOr(x, "field"), IntOr(x, "computed", 0), IntOr(x, "xla", 0)});
    }
  }
  auto fit = j.find("device_fit");
  if (fit != j.end() && !fit->is_null()) {
    DeviceFit f;
    f.device = StringOr(*fit, "device");
    f.capacity = IntOr(*fit, "capacity_bytes", 0);
    f.fraction = fit->value("mem_fraction", 1.0);
    f.usable = IntOr(*fit, "usable_bytes", 0);
    f.needed = IntOr(*fit, "needed_bytes", 0);
    f.usable_source = StringOr(*fit, "usable_source");
    if (fit->contains("needed_source")) f.needed_source = StringOr(*fit, "needed_source");
    f.computed_needed = OptionalInt(*fit, "computed_needed_bytes");
    f.fits = fit->value("fits", true);
    f.shortfall = IntOr(*fit, "shortfall_bytes", 0);
    f.caveat = StringOr(*fit, "caveat");
    f.capacity_source = StringOr(*fit, "capacity_source");
    f.capacity_estimated = fit->value("capacity_estimated", false);
    f.usable_from_log = StringOr(*fit, "usable_from_log");
    f.preset_usable = OptionalInt(*fit, "preset_usable_bytes");
    m.device_fit = f;
  }
  m.profile.peak_step = IntOr(j, "peak_step", -1);
  m.schedule_length = IntOr(j, "schedule_length", 0);
  auto peak = j.find("peak_instruction");
  if (peak != j.end() && peak->is_object()) {
    PeakInstruction p;
    p.instruction = StringOr(*peak, "instruction");
    p.opcode = StringOr(*peak, "opcode");
    p.op_name = StringOr(*peak, "op_name");
    ReadSource(*peak, &p.source_file, &p.source_line);
    m.peak_instruction = p;
  }
  m.rows = std::move(buffers.rows);
  if (j.contains("buffers")) {  // what the parse left: items that are not objects
    for (const Json& b : j["buffers"]) m.rows.push_back(ReadBuffer(b, buffers.pool.get()));
  }
  m.string_pools.push_back(std::move(buffers.pool));
  if (j.contains("live_at_peak")) {
    for (const Json& k : j["live_at_peak"]) {
      const int64_t index = AsInt(k);
      if (index >= 0 && static_cast<size_t>(index) < m.rows.size()) {
        m.profile.live_at_peak.push_back(static_cast<size_t>(index));
      }
    }
  }
  if (j.contains("timeline")) m.profile.timeline = AsInts(j["timeline"]);
  auto truncated = j.find("truncated");
  if (truncated != j.end() && truncated->is_object()) {
    if (truncated->contains("buffers")) m.buffers_total = IntOr((*truncated)["buffers"], "total", 0);
    if (truncated->contains("timeline")) m.timeline_total = IntOr((*truncated)["timeline"], "total", 0);
    if (truncated->contains("live_at_peak")) {
      m.live_at_peak_total = IntOr((*truncated)["live_at_peak"], "total", 0);
    }
    // The rows hold part of the live set: the rollups of all of it decide.
    auto rollup = [&](const char* key, std::vector<RollupRow>* out) {
      auto table = j.find(key);
      if (table == j.end() || !table->is_array()) return;
      for (const Json& row : *table) {
        out->push_back({StringOr(row, "key"), IntOr(row, "bytes", 0), static_cast<int>(IntOr(row, "buffers", 0))});
      }
    };
    if (truncated->contains("live_at_peak")) {
      rollup("peak_by_line", &m.peak_by_line);
      rollup("peak_by_op", &m.peak_by_op);
    }
  }
  // A bounded report's timeline: each kept step's bytes held until the next,
  // over the schedule's length, so that steps index it as before.
  auto steps = j.find("timeline_steps");
  if (steps != j.end() && steps->is_array() && steps->size() == m.profile.timeline.size()) {
    const std::vector<int64_t> at = AsInts(*steps);
    const std::vector<int64_t> bytes = std::move(m.profile.timeline);
    // The steps index the timeline to be rebuilt: a file that did not come
    // from hlomem must not make them write out of it or size it at will.
    for (size_t k = 0; k < at.size(); ++k) {
      if (at[k] < 0 || (k > 0 && at[k] <= at[k - 1])) {
        *error = "timeline_steps is not a list of increasing steps";
        return m;
      }
    }
    const int64_t length =
        std::max<int64_t>(m.timeline_total > 0 ? m.timeline_total : m.schedule_length,
                          at.empty() ? 0 : at.back() + 1);
    if (length > kMaxTimelineSteps) {
      *error = absl::StrCat("the timeline has ", length, " steps; a report has at most ",
                            kMaxTimelineSteps);
      return m;
    }
    m.profile.timeline.assign(static_cast<size_t>(length), 0);
    for (size_t k = 0; k < at.size(); ++k) {
      const int64_t end = k + 1 < at.size() ? at[k + 1] : length;
      for (int64_t step = k == 0 ? 0 : at[k]; step < end && step >= 0; ++step) {
        m.profile.timeline[static_cast<size_t>(step)] = bytes[k];
      }
    }
  }

  if (j.contains("stack_frames")) {
    for (const Json& f : j["stack_frames"]) {
      StackFrameRow row;
      row.file = StringOr(f, "file");
      row.function = StringOr(f, "function");
      row.line = IntOr(f, "line", 0);
      row.parent = IntOr(f, "parent", 0);
      row.library = f.value("library", false);
      m.stack_frames.push_back(std::move(row));
    }
  }
  if (j.contains("findings")) {
    for (const Json& f : j["findings"]) m.findings.push_back(ReadFinding(f));
  }
  if (j.contains("warnings")) m.warnings = j["warnings"].get<std::vector<std::string>>();
  return m;
}

}  // namespace

namespace {

void WriteReportDocument(const Report& report, const WriteOptions& options, JsonStream* out) {
  out->BeginObject();
  out->Key("schema_version");
  out->Int(kSchemaVersion);
  out->Key("tool");
  out->String("hlomem");
  out->Key("modules");
  out->BeginArray();
  for (const ModuleReport& m : report.modules) WriteModule(m, options, out);
  out->EndArray();
  out->Key("warnings");
  out->StringArray(report.warnings);
  out->Key("unreadable_modules");
  Json unreadable = Json::array();
  for (const dump::UnreadableModule& u : report.unreadable) {
    unreadable.push_back({{"path", u.path}, {"error", u.error}});
  }
  out->Value(unreadable);
  out->EndObject();
}

}  // namespace

std::string WriteJson(const Report& report, const WriteOptions& options) {
  std::string text;
  // Reserved up front so the text is not copied as it grows (a copy while
  // doubling held three times the report's size). A buffer row at indent 2
  // takes at most about 520 bytes besides its strings, a timeline step 24,
  // a stack frame 160.
  // The estimate errs high; pages never written are never touched.
  // A bounded report writes at most twice json_max_buffers rows and
  // json_max_timeline steps: the first rows stand in for the sizes of those.
  size_t estimate = 4096;
  for (const ModuleReport& m : report.modules) {
    const size_t rows = options.json_max_buffers > 0
                            ? std::min(m.rows.size(), 2 * options.json_max_buffers)
                            : m.rows.size();
    for (size_t k = 0; k < rows; ++k) {
      const BufferRow& r = m.rows[k];
      estimate += 520 + 24 * r.shape_index.size() + r.instruction.size() + r.opcode.size() +
                  r.shape.size() + r.kind.size() + r.memory_space.size() + r.op_name.size() +
                  r.op_type.size() + r.source_file.size();
    }
    const size_t steps = options.json_max_timeline > 0
                             ? std::min(m.profile.timeline.size(), 2 * options.json_max_timeline)
                             : m.profile.timeline.size();
    estimate += 24 * (steps + std::min(m.profile.live_at_peak.size(), rows));
    for (const StackFrameRow& f : m.stack_frames) estimate += 160 + f.file.size() + f.function.size();
  }
  text.reserve(estimate);
  JsonStream out(&text, options.json_indent);
  WriteReportDocument(report, options, &out);
  text.push_back('\n');
  return text;
}

absl::Status WriteJsonTo(const Report& report, const WriteOptions& options,
                         const std::function<absl::Status(absl::string_view)>& sink) {
  constexpr size_t kChunk = size_t{1} << 20;
  std::string text;
  text.reserve(2 * kChunk);
  absl::Status status;
  JsonStream out(&text, options.json_indent);
  // After a failed write the rest is made but not written; the first error
  // is the one returned.
  out.SetSink([&](absl::string_view piece) {
    if (status.ok()) status = sink(piece);
  }, kChunk);
  WriteReportDocument(report, options, &out);
  text.push_back('\n');
  out.Flush();
  return status;
}

std::string WriteDiffJson(const DiffReport& diff, const WriteOptions& options) {
  Json root;
  root["schema_version"] = kSchemaVersion;
  root["tool"] = "hlomem";
  root["kind"] = "diff";
  Json modules = Json::array();
  for (const ModuleDiff& d : diff.modules) {
    Json j;
    j["name"] = d.name;
    j["in_a"] = d.a != nullptr;
    j["in_b"] = d.b != nullptr;
    j["paired_by"] = std::string(PairBasisName(d.paired_by));
    j["a"] = d.a && d.a->computed ? Numbers(*d.a->computed, nullptr) : Json(nullptr);
    j["b"] = d.b && d.b->computed ? Numbers(*d.b->computed, nullptr) : Json(nullptr);
    Json delta;
    for (Metric metric : kMetrics) delta[std::string(MetricJsonKey(metric))] = MetricDelta(d, metric);
    j["delta"] = delta;
    Json changes = Json::array();
    for (const BufferChange& c : d.changes) {
      Json x;
      x["change"] = std::string(ChangeKindName(c.change));
      x["delta_bytes"] = c.delta();
      x["bytes_a"] = c.bytes_a;
      x["bytes_b"] = c.bytes_b;
      x["count_a"] = c.count_a;
      x["count_b"] = c.count_b;
      x["kind"] = c.kind;
      x["shape"] = c.shape;
      x["shape_from"] = c.shape_from;
      x["op_name"] = c.op_name;
      x["source"] = c.source;
      x["moved_from"] = c.moved_from;
      x["at_peak_b"] = c.at_peak_b;
      changes.push_back(std::move(x));
    }
    j["changes"] = std::move(changes);
    Json moved = Json::array();
    for (const BufferChange& c : d.moved) {
      moved.push_back({{"op_name", c.op_name}, {"shape", c.shape}, {"bytes", c.bytes_b},
                       {"source", c.source}, {"moved_from", c.moved_from}});
    }
    j["moved"] = std::move(moved);
    j["new_findings"] = Findings(d.new_findings);
    j["resolved_findings"] = Findings(d.resolved_findings);
    modules.push_back(std::move(j));
  }
  root["modules"] = std::move(modules);
  return Dump(root, options);
}

absl::StatusOr<Report> ReadJsonReport(absl::string_view json, const std::string& origin) {
  Report report;
  auto bad_json = [&](const char* what) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": error: bad report JSON: ", what));
  };
  try {
    // Each buffer of a module is read into its row as the parse reaches it
    // and left out of the document: a --full report's buffers as a document
    // took 5.4 times the file (4.3 GB for the 788 MB of the 64x gemma3 step).
    // Depths: modules[] at 1, a module's keys at 3, its buffers[] items at 4.
    std::vector<ReadRows> buffers;  // per module, in order
    std::string key_at[4];          // the last key read at depths 1 and 3
    auto read_buffers = [&](int depth, Json::parse_event_t event, Json& parsed) {
      if (event == Json::parse_event_t::key && (depth == 1 || depth == 3)) {
        key_at[depth] = parsed.get<std::string>();
        return true;
      }
      if (key_at[1] != "modules") return true;
      if (event == Json::parse_event_t::object_start && depth == 2) {
        buffers.emplace_back();
        key_at[3].clear();
      } else if (event == Json::parse_event_t::object_end && depth == 4 && key_at[3] == "buffers") {
        buffers.back().rows.push_back(ReadBuffer(parsed, buffers.back().pool.get()));
        return false;
      }
      return true;
    };
    const Json root = Json::parse(json.begin(), json.end(), read_buffers);
    if (!root.is_object() || !root.contains("modules") || !root.contains("schema_version")) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": error: not an hlomem report (no schema_version and modules)"));
    }
    const int64_t version = AsInt(root["schema_version"]);
    if (version < 1 || version > kSchemaVersion) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ": error: report schema version ", version,
                                                     "; this hlomem reads version ", kSchemaVersion));
    }
    if (root.value("kind", "") == "diff") {
      return absl::InvalidArgumentError(absl::StrCat(origin, ": error: this is a diff, not a report"));
    }
    size_t next = 0;  // buffers holds one entry per module that is an object
    for (const Json& m : root["modules"]) {
      ReadRows rows;
      if (m.is_object() && next < buffers.size()) rows = std::move(buffers[next++]);
      std::string error;
      report.modules.push_back(ReadModule(m, std::move(rows), &error));
      if (!error.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(origin, ": error: ", error));
      }
    }
    if (root.contains("warnings")) report.warnings = root["warnings"].get<std::vector<std::string>>();
    if (root.contains("unreadable_modules")) {
      for (const Json& u : root["unreadable_modules"]) {
        report.unreadable.push_back({StringOr(u, "path"), StringOr(u, "error")});
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return bad_json(e.what());
  } catch (const NotAnInteger& e) {
    return bad_json(e.what());
  }
  if (report.modules.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": error: the report has no modules"));
  }
  return report;
}

}  // namespace hlomem::report
