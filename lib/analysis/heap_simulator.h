// XLA's heap simulator: an event stream (alloc / free / share-with) laid
// out offline by GlobalDecreasingSizeBestFitHeap, once with the spatial and
// once with the temporal ordering; the smaller heap wins. A target may ask
// for one order alone, or for the allocation order (XLA:TPU's HBM).
#ifndef HLOMEM_LIB_ANALYSIS_HEAP_SIMULATOR_H_
#define HLOMEM_LIB_ANALYSIS_HEAP_SIMULATOR_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "lib/target/target.h"

namespace hlomem::analysis {

struct HeapEvent {
  // kPlaceWith: the buffer takes its own bytes at a fixed distance from
  // share_with's chunk (`offset` bytes above its start, or below when
  // negative), as the pieces of a sliced prefetch sit in the chunk of the
  // array they are concatenated into.
  enum Kind : uint8_t { kAlloc, kFree, kShareWith, kPlaceWith };
  Kind kind;
  uint32_t buffer;      // caller's id (a value id)
  int64_t size;         // bytes (the size of the value's whole HloBuffer)
  uint32_t share_with;  // for kShareWith and kPlaceWith: the buffer placed against
  int64_t offset = 0;   // for kPlaceWith: where from share_with's chunk
  // For kAlloc: placed before every buffer without it, whatever the order
  // (XLA:TPU's memory-space assignment gives a cross-program prefetch its
  // chunk before anything else).
  bool first = false;
  // The schedule step the event happens at, for the orders that compare
  // lifetimes in schedule time rather than in event ticks (-1: unknown).
  // 32 bits sit in the padding after `first`: events stay 40 bytes.
  int32_t step = -1;
};

struct HeapResult {
  int64_t heap_size = 0;
  // Offset per buffer id (indexed by the caller's ids; -1 if absent).
  std::vector<int64_t> offsets;
};

enum class HeapOrder {
  kSpatial,
  kTemporal,
  kAllocation,
  // Memory-space assignment's order when memory boundedness ties
  // (MemoryBoundednessBufferIntervalComparator): decreasing size, then
  // decreasing lifetime in schedule steps (HloLiveRange time, not event
  // ticks), then start. kScheduleSpatial takes a buffer's own size;
  // kScheduleExtent the bytes its whole group spans, as a sliced prefetch
  // is one interval of the size of the array its slices are joined into.
  kScheduleSpatial,
  kScheduleExtent,
  // Memory-space assignment's best-fit repacker: decreasing lifetime in
  // schedule steps, then decreasing extent, then start.
  kRepack,
};

// Lays out `events` with best-fit in decreasing size (kSpatial),
// decreasing lifetime (kTemporal) or allocation (kAllocation) order, or in
// the schedule-time orders above; kAllocation is an online best-fit
// allocator, each buffer placed when allocated among the chunks still live.
// `id_count` bounds the ids used.
HeapResult GlobalDecreasingSizeBestFit(const std::vector<HeapEvent>& events,
                                       uint32_t id_count, int64_t alignment,
                                       HeapOrder order);

// The heap in the orders a target asks for: by default both, the smaller
// heap winning and ties going to spatial (XLA's ChooseBestHeapAlgorithm over
// the two); the temporal, spatial or allocation order alone; or, for
// memory-space assignment, the smallest of the two
// schedule-time orders, the temporal and the allocation order.
//
// kMemorySpaceAssignment with a `budget`: when every order's heap exceeds
// it, each order is laid out again as memory-space assignment does under
// its budget, repacking when a buffer does not fit, and the smallest of
// those replaces the first result if it is smaller.
//
// Takes the events to free them once read (move them in where they are not
// needed after).
HeapResult BestHeap(std::vector<HeapEvent> events, uint32_t id_count, int64_t alignment,
                    target::HeapOrders orders = target::HeapOrders::kSmallerOfBoth,
                    std::optional<target::HeapBudget> budget = std::nullopt);

// The most bytes live at once over the event stream, a chunk shared by
// several buffers counted once: the heap size an ideal, fragmentation-free
// allocator would need. `id_count` bounds the ids used.
int64_t LiveBytesPeak(const std::vector<HeapEvent>& events, uint32_t id_count);

// A value's bytes held from step `start` to step `end`, both included.
struct LiveInterval {
  int64_t start = 0;
  int64_t end = 0;
  int64_t size = 0;
};

// The most bytes the intervals hold at one step: two intervals that meet
// at a step (one ending, the other starting) both count there.
int64_t IntervalsPeak(std::vector<LiveInterval> intervals);

}  // namespace hlomem::analysis

#endif  // HLOMEM_LIB_ANALYSIS_HEAP_SIMULATOR_H_
