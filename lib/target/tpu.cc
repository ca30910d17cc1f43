// XLA:TPU. What its dumps show (testdata/accel/tpu_*):
// - every array is laid out in tiles (T(8,128), scalars T(128) or T(256)...),
//   and a buffer occupies its padded size (ShapeUtil::ArraySize);
// - colours are memory spaces: 0 HBM, 1 VMEM, 2 SMEM, 4 host flags, 5 pinned host, and
//   others XLA's reports name only by number (6, 7, 8; 3 on v4);
// - the runtime offers a program less HBM than the chip has.
#include "lib/target/tpu.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/base/bytes.h"
#include "lib/target/target_files.h"

namespace hlomem::target {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMiB = int64_t{1} << 20;

// HBM per XLA device, and the limit XLA:TPU's CompileTimeHbmOom names
// ("available HBM (15.75G)", two decimals of GiB; testdata/accel's error.txt
// files). For v5p XLA names no reserve, so its limit stands for its HBM.
constexpr TpuGeneration kGenerations[] = {
    {"v2", 8 * kGiB, 0, 32},
    {"v3", 16 * kGiB, 0, 32},
    // v4 as jax's deviceless topologies give it: each TensorCore an XLA
    // device with half the chip's HBM ("available HBM (15.25G)"); a
    // megacore v4 device offers 30.75G.
    {"v4", 16 * kGiB, 15 * kGiB + 256 * kMiB, 512, 0, 64 * kMiB},
    {"v5e", 16 * kGiB, 15 * kGiB + 768 * kMiB, 512, 112 * kMiB},
    {"v5p", 95 * kGiB + 748 * kMiB, 95 * kGiB + 748 * kMiB, 32},
    {"v6e", 32 * kGiB, 31 * kGiB + 246 * kMiB, 32, 96 * kMiB},
};
// How close to the available HBM a program's first assignment may come
// before XLA:TPU assigns it again, trying harder. Measured on train steps of
// keras-hub's GPT-2 (v4, tensor parallel over 4), transformers' GPT-2 (v5e)
// and SmolLM2 (v5p), walking the sequence length up: XLA keeps the first
// assignment (allocation order) 3.31 GB under the limit on v4, 2.73 GB on
// v5e and 6.07 GB on v5p, and assigns again 2.48 GB under on v4 and 2.14 GB
// on v5e, keeping the second even where it is larger (v5e: 16.25 GB against
// 14.77 GB). No fraction of the limit or of the HBM splits all three.
constexpr int64_t kTightHeadroom = 2 * kGiB + 512 * kMiB;
// Memory-space assignment repacks at most this many times
// (xla_msa_max_repacks and xla_tpu_cmem_max_repacks in tpu_comp_env.txt).
constexpr int kMsaMaxRepacks = 4;

// Chunk offsets in XLA:TPU's heaps: every HBM temp offset in the dumps is a
// multiple of 16 KiB, VMEM's of 4 KiB, SMEM's of 4 bytes.
constexpr int64_t kHbmAlignment = 16384;
// VMEM's, and v4's colour 3's (placed by memory-space assignment as VMEM
// is: 71 of XLA's 948 colour-3 offsets are multiples of 4 KiB, not 16).
constexpr int64_t kVmemAlignment = 4096;
constexpr int64_t kSmemAlignment = 4;
// Colour 6 (XLA's memory-usage report calls it color_6) holds flags and
// scalars in 512-byte slots.
constexpr int64_t kColor6Alignment = 512;
constexpr int64_t kHbmColor = 0;
constexpr int64_t kVmemColor = 1;
constexpr int64_t kSmemColor = 2;
constexpr int64_t kV4Color3 = 3;  // v4's S(3), placed by memory-space assignment as VMEM is
// Colour 4, which XLA:TPU's memory-usage report calls "host": the s32[2]
// sync flags of an async collective's fusion (v5e all-gather), each in a
// 4 KiB page of its own.
constexpr int64_t kHostFlagColor = 4;
constexpr int64_t kHostFlagPage = 4096;
constexpr int64_t kColor6 = 6;
constexpr int64_t kSparseCoreTupleColor = 7;
constexpr int64_t kScalarFlagColor = 8;
constexpr absl::string_view kSparseCoreThread = "sparsecore";
constexpr int64_t kUntiledScalarElements = 1024;
constexpr int64_t kTupleElementBytes = 4;
// Without a generation: v5e's tables, the most common chip in the dumps.
constexpr int64_t kDefaultTupleTableGranule = 512;

// An array whose layout splits a dimension, `SC(d:i1,i2,...)`, is held one
// piece at a time: XLA:TPU sizes the VMEM buffer of f32[1024,1024] with
// SC(0:512) at 2 MiB, half its 4 MiB (v5p scan_rnn, kv_cache_decode_loop).
// The bytes of the largest piece; `padded` for any other layout.
int64_t SplitPieceBytes(const hlo::Shape& shape, int64_t padded) {
  if (!shape.layout) return padded;
  const absl::string_view other = shape.layout->other;
  const size_t open = other.find("SC(");
  if (open == absl::string_view::npos) return padded;
  const size_t close = other.find(')', open);
  const size_t colon = other.find(':', open);
  if (close == absl::string_view::npos || colon == absl::string_view::npos || colon > close) {
    return padded;
  }
  int64_t dim = 0;
  if (!absl::SimpleAtoi(other.substr(open + 3, colon - open - 3), &dim) || dim < 0 ||
      dim >= static_cast<int64_t>(shape.dims.size())) {
    return padded;
  }
  const int64_t extent = shape.dims[static_cast<size_t>(dim)];
  int64_t previous = 0, largest = 0;
  for (absl::string_view item : absl::StrSplit(other.substr(colon + 1, close - colon - 1), ',')) {
    int64_t at = 0;
    if (!absl::SimpleAtoi(item, &at) || at <= previous || at >= extent) return padded;
    largest = std::max(largest, at - previous);
    previous = at;
  }
  largest = std::max(largest, extent - previous);
  if (extent <= 0 || largest >= extent) return padded;
  // Pieces split a major dimension, whole tiles each in the dumps: the
  // padded bytes scale with the piece.
  return padded / extent * largest + (padded % extent) * largest / extent;
}

// The indices of the array leaves of `shape`, in pre-order.
std::vector<hlo::ShapeIndex> LeafIndices(const hlo::ShapeTable& shapes, hlo::ShapeId shape) {
  std::vector<hlo::ShapeIndex> leaves;
  shapes.ForEachSubshape(shape, [&](const hlo::ShapeIndex& at, hlo::ShapeId id) {
    if (!shapes.get(id).is_tuple()) leaves.push_back(at);
  });
  return leaves;
}

// The index groups of `"lists":[{"indices":["0","1"]},{...}]`, `text`
// starting at the list; malformed text ends the groups early.
std::vector<std::vector<int64_t>> ParseAliasingLists(absl::string_view text) {
  std::vector<std::vector<int64_t>> groups;
  constexpr absl::string_view kGroup = "{\"indices\":[";
  size_t pos = text.find('[');
  if (pos == absl::string_view::npos) return groups;
  ++pos;
  while (absl::StartsWith(text.substr(pos), kGroup)) {
    const size_t items = pos + kGroup.size();
    const size_t close = text.find(']', items);
    if (close == absl::string_view::npos) break;
    std::vector<int64_t> group;
    for (absl::string_view item : absl::StrSplit(text.substr(items, close - items), ',')) {
      int64_t value = 0;
      if (absl::SimpleAtoi(absl::StripSuffix(absl::StripPrefix(item, "\""), "\""), &value)) {
        group.push_back(value);
      }
    }
    groups.push_back(std::move(group));
    pos = close + 1;  // past "]", then "}" and "," before the next group
    if (pos < text.size() && text[pos] == '}') ++pos;
    if (pos < text.size() && text[pos] == ',') ++pos;
  }
  return groups;
}

class TpuTarget final : public Target {
 public:
  TpuTarget(const TpuGeneration* generation, int64_t alignment)
      : Target(Backend::kTpu,
               generation ? absl::StrCat("tpu ", generation->name) : std::string("tpu")),
        alignment_(alignment),
        tuple_table_granule_(generation ? generation->tuple_table_granule
                                        : kDefaultTupleTableGranule),
        generation_(generation) {
    if (generation != nullptr) {
      DeviceMemory memory;
      memory.device = name();
      memory.capacity = generation->hbm_bytes;
      if (generation->program_hbm_bytes > 0) {
        memory.program_limit = generation->program_hbm_bytes;
        memory.limit_source = "XLA:TPU's available HBM";
      }
      device_ = memory;
    }
  }

  int64_t BufferBytes(const hlo::ShapeTable& shapes, hlo::ShapeId id) const override {
    const hlo::Shape& shape = shapes.get(id);
    if (shape.is_tuple()) {
      const int64_t elements = static_cast<int64_t>(shape.tuple_elements.size());
      return RoundUpTo(kTupleElementBytes * elements, tuple_table_granule_);
    }
    // The scalar memories (SMEM, colour 8) hold values as they are, tiled
    // layout or not: s32[1]{0:T(128)S(2)} takes 4 bytes.
    const int64_t color = ColorOf(shape);
    if (color == kSmemColor || color == kScalarFlagColor) return shapes.ByteSize(id);
    if (color == kHostFlagColor) return RoundUpTo(shapes.PaddedByteSize(id), kHostFlagPage);
    // A scalar without a tile (in a comparator or reducer, where XLA:TPU
    // prints no layout) takes the 1024-element tile of a vector register.
    if (shape.is_array() && shape.dims.empty() &&
        (!shape.layout || shape.layout->tiles.empty())) {
      return kUntiledScalarElements * shapes.ByteSize(id);
    }
    return SplitPieceBytes(shape, shapes.PaddedByteSize(id));
  }

  // A computation on the SparseCore thread starts its offloaded call with
  // an async-start whose tuple tables ({} and {0}, beside the u32[] S(8)
  // context) XLA:TPU keeps in colour 7, at no size: its assignments show
  // "allocation 15: size 0, color 7" holding just these.
  std::optional<ValuePlacement> PlaceValue(const hlo::Module& module, hlo::InstrId instruction,
                                           hlo::ShapeId shape) const override {
    if (!module.shapes.get(shape).is_tuple()) return std::nullopt;
    const hlo::Instruction& instr = module.instr(instruction);
    if (instr.opcode != hlo::Opcode::kAsyncStart ||
        module.comp(instr.parent).execution_thread != kSparseCoreThread) {
      return std::nullopt;
    }
    return ValuePlacement{kSparseCoreTupleColor, 0};
  }

  int64_t Alignment(int64_t color) const override {
    if (alignment_ > 0) return alignment_;
    switch (color) {
      case kVmemColor:
      case kV4Color3:
        return kVmemAlignment;
      case kSmemColor:
      case kScalarFlagColor:
        return kSmemAlignment;
      case kColor6: return kColor6Alignment;
      case kHostFlagColor: return kHostFlagPage;
      default: return kHbmAlignment;
    }
  }

  // XLA:TPU writes which operands an instruction may overwrite into its
  // backend_config: "aliasing_operands":{"lists":[{"indices":["2","6"]}]}
  // numbers the operands 0..n-1 and then the output's leaves n.., and each
  // list is a set of positions that can share one buffer. They share it
  // only where the operand dies at the instruction: in a dropout's threefry
  // chain on S(6), `add.3023 = add(x, add.3022)` lists add.3022, which two
  // later shifts read, and XLA gives the two their own offsets; the second
  // shift, add.3022's last reader, takes its offset. (The schedule is the
  // text order, so a later user has a larger id.) An operand goes to one
  // output, the first listed: a v5p MLP fusion listing ["14","16","17"]
  // writes two bf16[28,6176,256] outputs that both live on, and XLA gives
  // one of them the operand's offset (sharing it with both left HBM 88.5 MB
  // and S(6) 1 KiB short of XLA's).
  std::vector<InPlaceAlias> InPlaceAliases(const hlo::Module& module,
                                           hlo::InstrId instruction) const override {
    std::vector<InPlaceAlias> out;
    const absl::string_view config = module.attribute(instruction, "backend_config").value_or("");
    const size_t lists = config.find("\"aliasing_operands\":{\"lists\":[");
    if (lists == absl::string_view::npos) return out;
    const auto operands = module.operands(instruction);
    const int64_t operand_count = static_cast<int64_t>(operands.size());
    const std::vector<hlo::ShapeIndex> leaves =
        LeafIndices(module.shapes, module.instr(instruction).shape);
    for (const std::vector<int64_t>& group : ParseAliasingLists(config.substr(lists))) {
      std::vector<bool> taken(static_cast<size_t>(operand_count), false);
      for (int64_t output : group) {
        const int64_t leaf = output - operand_count;
        if (leaf < 0 || leaf >= static_cast<int64_t>(leaves.size())) continue;
        for (int64_t operand : group) {
          if (operand < 0 || operand >= operand_count || taken[static_cast<size_t>(operand)]) continue;
          const hlo::InstrId source = operands[static_cast<size_t>(operand)];
          if (!module.shape_of(source).is_array()) continue;
          const auto users = module.users(source);
          if (!users.empty() && users.back() > instruction) continue;  // read later
          taken[static_cast<size_t>(operand)] = true;
          out.push_back({static_cast<uint32_t>(operand), {}, leaves[static_cast<size_t>(leaf)]});
          break;
        }
      }
    }
    return out;
  }

  std::string caveat() const override {
    return "XLA:TPU is closed source; its rules here are read off its own dumps (HBM exact on 99% "
           "of them). VMEM is placed by its memory-space assignment, which the HLO does not "
           "record, so the VMEM figure is an estimate; memory_analysis()'s temp_size on TPU is "
           "not the assignment's temp and cannot be derived from the dump";
  }

  // XLA:TPU's first assignment allocates tuple tables in the order the
  // schedule defines them, whatever their sizes. The tables XLA's partition
  // of the allocations does not move stack up below the heap and the others
  // above it, and XLA's offsets show both runs in schedule order: a v5p
  // SmolLM2 step's 96-byte all-reduce table between 32-byte ones (by size
  // first it ended the combined temp, 64 B over XLA), a v6e Gemma 3 step's
  // 192-byte one likewise (160 B over). Across the TPU programs, 11,863 of
  // the temp values sit at XLA's offsets where 6,862 did.
  bool TupleTablesInScheduleOrder(bool tight) const override { return !tight; }
  // Its second, tighter assignment allocates a table by its size, as any
  // buffer (so after the arrays, which are larger, and a larger table
  // first), and in both a loop's carried tuple, a buffer of several values,
  // after all of them in post order: in a decode loop's combined temp the
  // 64-byte while tuple sits between the 32-byte copy-start tables of the
  // entry computation and those of the loop body, and the last table
  // escapes the 16 KiB padding; in keras-hub's GPT-2 step on v6e the
  // 256-byte tuple of a combined all-reduce, created first of the tables,
  // ends the combined temp (224 B short of XLA's HBM when it came in post
  // order), while the 32-byte ones of four others keep their post-order
  // slots below the heap.
  bool TupleTableAssignedLast(size_t values) const override { return values > 1; }

  bool TempsShareOutputAllocations() const override { return false; }
  // XLA:TPU tries harder when a program comes within 2.5 GiB of the
  // available HBM (kTightHeadroom), not only past it:
  // - It lets temps into outputs' allocations before the output is
  //   written (keras-hub's GPT-2 step on v6e: 16 temps, 10 KiB, +180,000 B
  //   without), and into donated parameters' allocations while the
  //   parameter is dead: an MLP Adam step keeps its layout copies out of
  //   the donated weights at 26 GB on v6e and puts them in at 37 GB, over
  //   v6e's 31.24 GiB; a GPT-2 step of transformers on v5p puts 28 temps of
  //   512 B to 2.8 MB (iotas, masks, all-reduces, remat outputs) into one
  //   donated f32[6176,512]. Letting in only temps of the parameter's own
  //   array left v5e's GPT-2 steps 851,968 B over XLA; any temp, exact.
  // - It lays its HBM heap out in the smaller of the decreasing-size and
  //   decreasing-lifetime orders (XLA's heap simulator's choice): a
  //   transformer step batched past the HBM of v4, v5e and v6e gets the
  //   first (2.7 GB smaller than the allocation order's), keras-hub's GPT-2
  //   step past v6e's the second (+5.4 MB against XLA's 36.54 GB, where
  //   decreasing size gives +608 MB).
  std::optional<int64_t> TightAssignmentAbove() const override {
    if (!device_ || !device_->program_limit) return std::nullopt;
    return std::max<int64_t>(0, *device_->program_limit - kTightHeadroom);
  }
  // All-gathers' outputs stay in the heap: on the v5p GPT-2 step all 108
  // of them (4 KiB to 17.4 GB) sit in XLA's temp allocation, where 57 had
  // gone into donated parameters' here; kept out, the temp allocation
  // holds exactly XLA's 901 values.
  bool TightTempMayTakeInputOutput(const hlo::Module& module,
                                   hlo::InstrId instruction) const override {
    return module.instr(instruction).opcode != hlo::Opcode::kAllGather;
  }
  HeapOrders tight_heap_orders(int64_t color) const override {
    return color == kHbmColor ? HeapOrders::kSmallerOfBoth : heap_orders(color);
  }
  // HBM: XLA:TPU places each buffer as it is allocated, best fit among the
  // chunks live then. Its offsets show it: a multi-output fusion's leaves
  // stacked in order of their ends (f32[] then f32[8192,8192] then
  // f32[8192]), where a decreasing-size or -lifetime order would put the
  // largest lowest; the order matches 307 of 329 HBM heaps (temporal 278).
  // VMEM and v4's colour 3 are placed by memory-space assignment, which
  // sorts by the cost model's memory boundedness (not in the dump), then by
  // size and by lifetime in schedule steps, a sliced prefetch as one
  // interval of its whole array. The smallest of those two orders (by a
  // buffer's own size and by its group's), the temporal and the allocation
  // order matches VMEM in 254 of 261 modules and colour 3 in 78 of 82; the
  // same with the spatial order in event ticks instead, 251 and 78.
  // SMEM by the smaller of the offline two (238 of 238; 237 with all three).
  HeapOrders heap_orders(int64_t color) const override {
    switch (color) {
      case kHbmColor: return HeapOrders::kAllocationOnly;
      case kVmemColor:
      case kV4Color3: return HeapOrders::kMemorySpaceAssignment;
      default: return HeapOrders::kSmallerOfBoth;
    }
  }

  // Memory-space assignment's budget: XLA:TPU's VMEM heaps reach 112 MiB
  // on v5e and 96 MiB on v6e and never more (the rest of the 128 MiB is
  // scoped memory for kernels), v4's colour 3 64 MiB, in the committed
  // dumps and in real training steps' dumps. A transformer step that every
  // order lays out past it (v4 72 MiB, v6e 100 MiB) XLA packs to within
  // 0.2% of its live bytes' peak.
  std::optional<HeapBudget> heap_budget(int64_t color) const override {
    if (generation_ == nullptr) return std::nullopt;
    const int64_t bytes = color == kVmemColor  ? generation_->msa_vmem_bytes
                          : color == kV4Color3 ? generation_->msa_color3_bytes
                                               : 0;
    if (bytes == 0) return std::nullopt;
    return HeapBudget{bytes, kMsaMaxRepacks};
  }

  // XLA:TPU's peak_memory_in_bytes counts VMEM (and v4's colour 3) value
  // by value: a fusion writing in place over its operand counts both at its
  // step (a loop of f32[4096,4096] updated in place peaks at 128 MiB of a
  // 64 MiB VMEM heap), as does a user meeting its operand's last use, but a
  // loop's or conditional's phi values do not (a 12-array loop carry
  // counts once).
  bool PeakCountsValues(int64_t color) const override {
    return color == kVmemColor || color == kV4Color3;
  }

  // VMEM and v4's colour 3 are laid out by memory-space assignment, which
  // finds each buffer a chunk of its own: a sort or an elementwise fusion
  // in VMEM never takes its dying operand's chunk unless the two are one
  // buffer (the aliasing_operands of XLA:TPU's backend_config). With reuse,
  // VMEM matched 212 of 247 modules; without, 226 (colour 3 70 -> 72 of 82).
  bool HeapReusesOperandBuffers(int64_t color) const override {
    return color != kVmemColor && color != kV4Color3;
  }

  // Memory-space assignment keeps a conditional's output buffer from the
  // first branch's result to the output's last use: a 128 KiB value in the
  // last of three branches sits below that buffer, not in its chunk
  // (switch_branches on v4, v5e and v6e).
  bool BranchResultsLiveToTheConditionalsEnd(int64_t color) const override {
    return color == kVmemColor || color == kV4Color3;
  }

  MemorySpace Space(int64_t color) const override {
    MemorySpace space;
    switch (color) {
      case kHbmColor: space.name = "HBM"; space.is_main = true; break;
      case kVmemColor: space.name = "VMEM"; break;
      case kSmemColor: space.name = "SMEM"; break;
      case kHostColor: space.name = "host"; space.is_host = true; break;
      case kHostFlagColor:
        space.name = "host";
        space.is_host = true;
        space.in_memory_analysis = false;
        break;
      default: space.name = absl::StrCat("S(", color, ")"); break;
    }
    return space;
  }

 private:
  int64_t alignment_;  // --alignment for every colour; 0 for XLA:TPU's own
  int64_t tuple_table_granule_;
  const TpuGeneration* generation_;  // nullptr when the dump names none
};

}  // namespace

const TpuGeneration* FindTpuGeneration(absl::string_view name) {
  std::string key = absl::AsciiStrToLower(name);
  absl::StrReplaceAll({{" ", ""}, {"tpu", ""}}, &key);
  if (key == "v5lite" || key == "v5litepod") key = "v5e";
  if (key == "v6lite" || key == "v6litepod" || key == "trillium") key = "v6e";
  if (key == "v5") key = "v5p";
  for (const TpuGeneration& g : kGenerations) {
    if (g.name == key) return &g;
  }
  return nullptr;
}

absl::StatusOr<const TpuGeneration*> ParseTpuTargetArguments(absl::string_view path,
                                                             absl::string_view text) {
  std::string version, variant;
  absl::Status status = ForEachTextProtoField(
      path, text, [&](const std::string& field, const std::string& value) {
        if (field == "tpu_topology_args.version") version = value;
        if (field == "tpu_topology_args.variant") variant = value;
      });
  if (!status.ok()) return status;
  // libtpu's code names for the generations.
  const bool lite = variant == "lite";
  if (version == "TPU_VERSION_JELLYFISH") return FindTpuGeneration("v2");
  if (version == "TPU_VERSION_DRAGONFISH") return FindTpuGeneration("v3");
  if (version == "TPU_VERSION_PUFFERFISH" && !lite) return FindTpuGeneration("v4");
  if (version == "TPU_VERSION_VIPERFISH") return FindTpuGeneration(lite ? "v5e" : "v5p");
  if (version == "TPU_VERSION_GHOSTLITE") return FindTpuGeneration("v6e");
  return static_cast<const TpuGeneration*>(nullptr);
}

std::unique_ptr<Target> MakeTpuTarget(const TpuGeneration* generation, int64_t alignment) {
  return std::make_unique<TpuTarget>(generation, alignment);
}

}  // namespace hlomem::target
