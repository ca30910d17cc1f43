// The target layer: what XLA's buffer assigner asks its backend, answered
// per backend and device generation in one place. The analysis sizes,
// colours, aligns and shares buffers through a Target; the reports name
// memory spaces and judge device fit through it. Modelled on the hooks of
// XLA's BufferAssigner (size function, colour alignment, colorer, AliasInfo)
// and on what each runtime reserves.
#ifndef HLOMEM_LIB_TARGET_TARGET_H_
#define HLOMEM_LIB_TARGET_TARGET_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lib/base/memory_stats.h"
#include "lib/hlo/module.h"

namespace hlomem::target {

enum class Backend : uint8_t { kUnknown, kCpu, kGpu, kTpu };
// "cpu", "gpu", "tpu", "" for kUnknown.
absl::string_view BackendName(Backend backend);

// The memory space (layout S(n), allocation colour) of host memory on CPU,
// GPU and TPU: Layout::kHostMemorySpace.
inline constexpr int64_t kHostColor = 5;

// A memory space as the backend uses it.
struct MemorySpace {
  std::string name;      // "device", "HBM", "VMEM", "SMEM", "host", "S(3)"
  bool is_host = false;  // memory_analysis() counts it in the host_* fields
  // Device memory (GPU memory, TPU HBM): memory_analysis() counts it in its
  // device fields, and device fit checks it. Not on-chip memories.
  bool is_main = false;
  // memory_analysis() counts it at all: XLA:TPU leaves out its colour-4
  // host flags (4 KiB in the buffer assignment, host_temp_size 0).
  bool in_memory_analysis = true;
};

// The memory a device offers programs, as its runtime or compiler states it.
struct DeviceMemory {
  std::string device;     // "tpu v5e", "NVIDIA H100 80GB HBM3"
  int64_t capacity = 0;   // physical bytes of the main memory
  // Bytes XLA lets one program use; nullopt when the dump does not
  // determine it (GPU: the framework's preallocation decides).
  std::optional<int64_t> program_limit;
  std::string limit_source;  // where program_limit comes from
};

// An output that must be written into an operand's buffer (an in-place
// pair of XLA's alias analysis).
struct InPlaceAlias {
  uint32_t operand = 0;
  hlo::ShapeIndex operand_index;
  hlo::ShapeIndex output_index;
};

// Which orders the heap simulator lays a colour's heap out in.
enum class HeapOrders : uint8_t {
  kSmallerOfBoth,  // XLA's ChooseBestHeapAlgorithm: temporal and spatial
  kTemporalOnly,
  // Online best fit: each buffer placed when it is allocated, among the
  // chunks live then (XLA:TPU's HBM heap).
  kAllocationOnly,
  // The smallest of the allocation and temporal orders and of memory-space
  // assignment's size-then-lifetime order in schedule time, by a buffer's
  // own size and by its group's extent (analysis::HeapOrder).
  kMemorySpaceAssignment,
};

// What memory-space assignment may use of a colour: its heap never ends
// above `bytes`, and it repacks what it has placed up to `max_repacks`
// times when a buffer does not fit.
struct HeapBudget {
  int64_t bytes = 0;
  int max_repacks = 0;
};

class Target {
 public:
  virtual ~Target() = default;

  Backend backend() const { return backend_; }
  // "cpu", "gpu sm_9.0", "tpu v5e": for reports and messages.
  const std::string& name() const { return name_; }

  // XLA's BufferSizeBytesFunction for an array, token or tuple leaf: what
  // one buffer of `shape` occupies. Tuples are 8-byte pointer tables.
  virtual int64_t BufferBytes(const hlo::ShapeTable& shapes, hlo::ShapeId shape) const;

  // The colorer: a value's colour from its defining shape's layout.
  virtual int64_t ColorOf(const hlo::Shape& shape) const;

  // A value the backend colours and sizes by where it is defined, not by
  // its shape alone; nullopt leaves it to ColorOf and BufferBytes.
  struct ValuePlacement {
    int64_t color = 0;
    int64_t size = 0;
  };
  virtual std::optional<ValuePlacement> PlaceValue(const hlo::Module& /*module*/,
                                                   hlo::InstrId /*instruction*/,
                                                   hlo::ShapeId /*shape*/) const {
    return std::nullopt;
  }

  // Chunk alignment in the heap of `color`, and between combined temps.
  virtual int64_t Alignment(int64_t color) const = 0;

  // The memory space behind a colour.
  virtual MemorySpace Space(int64_t color) const;

  // XLA's AliasInfo::MayAlias: whether `user` may write its output at
  // `user_index` into the buffer of `operand`'s value at `operand_index`.
  // nullopt leaves the decision to the generic rules (the CPU answer).
  virtual std::optional<bool> MayAlias(const hlo::Module& module, hlo::InstrId operand,
                                       const hlo::ShapeIndex& operand_index, hlo::InstrId user,
                                       const hlo::ShapeIndex& user_index) const;

  // The orders the heap of `color` is laid out in.
  virtual HeapOrders heap_orders(int64_t /*color*/) const { return HeapOrders::kSmallerOfBoth; }
  // What memory-space assignment may use of a colour laid out by it
  // (kMemorySpaceAssignment); none where the dumps show no limit.
  virtual std::optional<HeapBudget> heap_budget(int64_t /*color*/) const { return std::nullopt; }

  // Whether memory_analysis()'s peak counts the heap of `color` value by
  // value rather than by the heap simulator's events: each value over its
  // own live range, both ends included, with no operand's buffer handed to
  // its user; the values of one buffer count once where a control-flow
  // value (a phi: a loop's or conditional's parameter or output) takes
  // over from the one before it. XLA:TPU's memories placed by memory-space
  // assignment (VMEM) are counted so.
  virtual bool PeakCountsValues(int64_t /*color*/) const { return false; }

  // Whether the heap of `color` hands a value's chunk to a user that may
  // write over it (XLA's heap simulator: a value whose operand dies at it
  // takes the operand's chunk). Memories placed by XLA:TPU's memory-space
  // assignment do not: it gives each buffer its own chunk, and only the
  // values of one buffer (aliased by dataflow) share.
  virtual bool HeapReusesOperandBuffers(int64_t /*color*/) const { return true; }

  // Whether, in the heap of `color`, the values a conditional's branches
  // return (with the rest of the conditional output's buffer) stay live to
  // the end of that buffer's last value rather than each to its own last
  // use. XLA's HloLiveRange, which memory-space assignment lays out by,
  // counts the conditional's output among the positions of each branch's
  // result, so a branch's result is live through the later branches.
  virtual bool BranchResultsLiveToTheConditionalsEnd(int64_t /*color*/) const { return false; }

  // Whether a temp may be placed in an output's allocation when their live
  // ranges do not meet (XLA's MaybeAssignBuffer). XLA:TPU keeps outputs to
  // themselves, but lets temps into a donated parameter's allocation.
  virtual bool TempsShareOutputAllocations() const { return true; }

  // Whether a tuple table's buffer holding `values` values (several: a
  // loop's carried tuple) is assigned after every other buffer, in post
  // order, rather than by its size among them. Only the order of the
  // allocations changes, and with it where each table sits in the combined
  // temp allocation.
  virtual bool TupleTableAssignedLast(size_t /*values*/) const { return false; }
  // Whether tuple tables are assigned in the order the schedule defines
  // them, whatever their sizes, rather than by size like any buffer; `tight`:
  // in the second, tighter assignment (TightAssignmentAbove). Only the order
  // of the allocations changes, and with it where each table sits.
  virtual bool TupleTablesInScheduleOrder(bool /*tight*/) const { return false; }

  // The device-memory bytes (all main-memory allocations) above which the
  // backend assigns the program again, trying harder to fit it: a temp may
  // then take an output's or a donated parameter's allocation while it is
  // free (where temps do not share outputs' allocations), and each heap is laid
  // out in tight_heap_orders. XLA:TPU does so within 2.5 GiB of its
  // available HBM and past it.
  // nullopt: never.
  virtual std::optional<int64_t> TightAssignmentAbove() const { return std::nullopt; }
  // Whether a temp defined by `instruction` may take an output's or a
  // donated parameter's allocation in that tighter assignment.
  virtual bool TightTempMayTakeInputOutput(const hlo::Module& /*module*/,
                                           hlo::InstrId /*instruction*/) const {
    return true;
  }
  virtual HeapOrders tight_heap_orders(int64_t color) const { return heap_orders(color); }

  // In-place pairs the backend adds to XLA's generic ones for `instruction`
  // (GetInPlaceInputOutputPairs): they join the two values' buffers.
  virtual std::vector<InPlaceAlias> InPlaceAliases(const hlo::Module&, hlo::InstrId) const {
    return {};
  }

  // The device the dump was compiled for, when it names one.
  const std::optional<DeviceMemory>& device() const { return device_; }

  // The share of a device's memory the framework hands XLA when the user
  // gives none: JAX preallocates 75% on GPUs; TPUs offer the program limit.
  virtual double DefaultMemFraction() const { return 1.0; }

  // Whether hlomem reproduces this backend's assignment byte for byte;
  // when not, why (shown beside the computed figures).
  virtual bool exact() const { return false; }
  virtual std::string caveat() const;

 protected:
  Target(Backend backend, std::string name) : backend_(backend), name_(std::move(name)) {}

  std::optional<DeviceMemory> device_;

 private:
  Backend backend_;
  std::string name_;
};

// What an allocation is, for memory_analysis()'s sums.
struct AllocationRole {
  bool parameter = false;
  bool aliased = false;  // a parameter donated to an output
  bool live_out = false;
  bool temp = false;
  bool constant = false;
  bool thread_local_ = false;
};

// Adds one allocation of `color` to `stats` as memory_analysis() counts it
// (xla/pjrt's PopulateBufferStatsFromAllocations): host memory in the host_
// fields, device memory in the others, on-chip memories (TPU VMEM, SMEM) in
// none. Returns whether it counted. Sums saturate: sizes may come from a file.
bool AddToMemoryStats(const Target& target, int64_t color, const AllocationRole& role,
                      int64_t size, MemoryStats* stats);

// XLA:CPU: logical sizes, one memory space (plus host), 64-byte chunks
// (EIGEN_MAX_ALIGN_BYTES of XLA's Eigen build) unless `alignment` > 0.
std::unique_ptr<Target> MakeCpuTarget(int64_t alignment = 0);

// A module whose backend nothing tells: XLA:CPU's rules, no backend name.
std::unique_ptr<Target> MakeUnknownTarget(int64_t alignment = 0);

// The default target of analyses given none: XLA:CPU.
const Target& DefaultTarget();

}  // namespace hlomem::target

#endif  // HLOMEM_LIB_TARGET_TARGET_H_
