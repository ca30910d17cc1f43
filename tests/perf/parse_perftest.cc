// Throughput of the HLO text front end, in bytes per second: the scanning
// loops ("lexer") on attribute-heavy text, the parser on real dumps, and the
// verifier that every load runs after it. For a file, the counter x_cat is
// how many times longer an iteration takes (wall) than reading the file
// with read(2), as `cat` does: 1 would be parsing at memory bandwidth.
#include <chrono>

#include "benchmark/benchmark.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"
#include "tests/perf/perf_inputs.h"

namespace hlomem::perf {
namespace {

void ParseOrFail(benchmark::State& state, const std::shared_ptr<const FileContents>& file,
                 bool verify) {
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    absl::StatusOr<std::vector<hlo::Module>> modules = hlo::ParseHloText(file);
    if (!modules.ok()) {
      state.SkipWithError(std::string(modules.status().message()).c_str());
      return;
    }
    if (verify && !hlo::VerifyModule(modules->front()).ok()) {
      state.SkipWithError("verification failed");
      return;
    }
    benchmark::DoNotOptimize(modules->front().instructions.data());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(file->data().size()));
  if (file->is_mapped() && state.iterations() > 0) {
    if (const double cat = CatSeconds(file->path()); cat > 0) {
      state.counters["x_cat"] = seconds / static_cast<double>(state.iterations()) / cat;
    }
  }
}

// Long quoted and bracketed attribute values: the lexing loops' share.
void BM_LexAttributes(benchmark::State& state) {
  static const auto file = FileContents::FromString(
      "attribute_heavy.hlo", AttributeHeavyModule(static_cast<int>(state.range(0))));
  ParseOrFail(state, file, /*verify=*/false);
}
BENCHMARK(BM_LexAttributes)->Arg(20000)->Unit(benchmark::kMillisecond);

void BM_Parse(benchmark::State& state) {
  const PerfInput& input = PerfInputs()[static_cast<size_t>(state.range(0))];
  state.SetLabel(input.label);
  ParseOrFail(state, input.file, /*verify=*/false);
}

void BM_ParseAndVerify(benchmark::State& state) {
  const PerfInput& input = PerfInputs()[static_cast<size_t>(state.range(0))];
  state.SetLabel(input.label);
  ParseOrFail(state, input.file, /*verify=*/true);
}

void AllInputs(benchmark::internal::Benchmark* b) {
  for (size_t k = 0; k < PerfInputs().size(); ++k) b->Arg(static_cast<int64_t>(k));
  b->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_Parse)->Apply(AllInputs);
BENCHMARK(BM_ParseAndVerify)->Apply(AllInputs);

}  // namespace
}  // namespace hlomem::perf
