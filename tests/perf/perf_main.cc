// The benchmarks' main: the allocator is set up as the hlomem binary sets
// it, so repeated parses reuse memory as a directory's modules do there.
#include "benchmark/benchmark.h"
#include "lib/base/allocator.h"

int main(int argc, char** argv) {
  hlomem::RetainFreedMemoryForReuse();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
