// The engine on real modules: dataflow and alias analysis, the whole buffer
// assignment (live ranges, reuse, the heap simulator), the memory profile,
// and the heap simulator alone on a synthetic event stream.
#include <random>

#include "benchmark/benchmark.h"
#include "lib/analysis/buffer_assignment.h"
#include "lib/analysis/heap_simulator.h"
#include "lib/analysis/memory_profile.h"
#include "lib/hlo/text_parser.h"
#include "tests/perf/perf_inputs.h"

namespace hlomem::perf {
namespace {

// Parsed once per input; the benchmarks time only the engine.
const hlo::Module& ModuleOf(size_t k) {
  static auto* modules = new std::vector<std::unique_ptr<hlo::Module>>(PerfInputs().size());
  std::unique_ptr<hlo::Module>& slot = (*modules)[k];
  if (!slot) {
    absl::StatusOr<std::vector<hlo::Module>> parsed = hlo::ParseHloText(PerfInputs()[k].file);
    if (!parsed.ok()) {
      std::fprintf(stderr, "%s\n", std::string(parsed.status().message()).c_str());
      std::exit(2);
    }
    slot = std::make_unique<hlo::Module>(std::move(parsed->front()));
  }
  return *slot;
}

void BM_Dataflow(benchmark::State& state) {
  const size_t k = static_cast<size_t>(state.range(0));
  const hlo::Module& m = ModuleOf(k);
  state.SetLabel(PerfInputs()[k].label);
  const analysis::CallGraph graph = analysis::BuildCallGraph(m);
  for (auto _ : state) {
    absl::StatusOr<analysis::Dataflow> df = analysis::Dataflow::Run(m, graph);
    benchmark::DoNotOptimize(df->values().data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(m.instructions.size()));
}

void BM_BufferAssignment(benchmark::State& state) {
  const size_t k = static_cast<size_t>(state.range(0));
  const hlo::Module& m = ModuleOf(k);
  state.SetLabel(PerfInputs()[k].label);
  for (auto _ : state) {
    auto assignment = analysis::BufferAssignment::Run(m);
    benchmark::DoNotOptimize((*assignment)->stats().total_bytes);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(m.instructions.size()));
}

void BM_MemoryProfile(benchmark::State& state) {
  const size_t k = static_cast<size_t>(state.range(0));
  const hlo::Module& m = ModuleOf(k);
  state.SetLabel(PerfInputs()[k].label);
  auto assignment = analysis::BufferAssignment::Run(m);
  for (auto _ : state) {
    analysis::MemoryProfile profile = analysis::ComputeMemoryProfile(**assignment);
    benchmark::DoNotOptimize(profile.peak_live_bytes);
  }
}

void AllInputs(benchmark::internal::Benchmark* b) {
  for (size_t k = 0; k < PerfInputs().size(); ++k) b->Arg(static_cast<int64_t>(k));
  b->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_Dataflow)->Apply(AllInputs);
BENCHMARK(BM_BufferAssignment)->Apply(AllInputs);
BENCHMARK(BM_MemoryProfile)->Apply(AllInputs);

// `n` buffers with random sizes and lifetimes in a schedule of n steps:
// alloc at the start step, free after the end step, in time order.
std::vector<analysis::HeapEvent> RandomEvents(uint32_t n) {
  std::mt19937_64 rng(42);
  struct Life {
    uint32_t start, end;
  };
  std::vector<Life> lives(n);
  std::vector<std::vector<uint32_t>> starting(n), ending(n);
  for (uint32_t id = 0; id < n; ++id) {
    const uint32_t start = static_cast<uint32_t>(rng() % n);
    const uint32_t end = std::min<uint32_t>(n - 1, start + static_cast<uint32_t>(rng() % 64));
    starting[start].push_back(id);
    ending[end].push_back(id);
  }
  std::vector<analysis::HeapEvent> events;
  for (uint32_t t = 0; t < n; ++t) {
    for (uint32_t id : starting[t]) {
      events.push_back({analysis::HeapEvent::kAlloc, id, int64_t{64} << (rng() % 16), 0});
    }
    for (uint32_t id : ending[t]) events.push_back({analysis::HeapEvent::kFree, id, 0, 0});
  }
  return events;
}

void BM_HeapSimulator(benchmark::State& state) {
  const uint32_t n = static_cast<uint32_t>(state.range(0));
  const std::vector<analysis::HeapEvent> events = RandomEvents(n);
  for (auto _ : state) {
    analysis::HeapResult heap = analysis::GlobalDecreasingSizeBestFit(
        events, n, /*alignment=*/64, analysis::HeapOrder::kSpatial);
    benchmark::DoNotOptimize(heap.heap_size);
  }
  state.SetComplexityN(n);
}
BENCHMARK(BM_HeapSimulator)->RangeMultiplier(4)->Range(1 << 12, 1 << 18)
    ->Unit(benchmark::kMillisecond)->Complexity();

}  // namespace
}  // namespace hlomem::perf
