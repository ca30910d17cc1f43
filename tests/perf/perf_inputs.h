// Inputs shared by the perf binaries: real dumps from testdata/ and, when
// HLOMEM_PERF_FILE names one, a big module from tools/perf/ (generated, never
// committed).
#ifndef HLOMEM_TESTS_PERF_PERF_INPUTS_H_
#define HLOMEM_TESTS_PERF_PERF_INPUTS_H_

#include <memory>
#include <string>
#include <vector>

#include "lib/base/file_contents.h"

namespace hlomem::perf {

struct PerfInput {
  std::string label;  // benchmark argument name
  std::shared_ptr<const FileContents> file;
};

// The largest after-optimizations texts of testdata/jax, the modules over
// 1 MB of ../shared/corpus (when present), then $HLOMEM_PERF_FILE if set. Exits with a message when a file cannot be read.
const std::vector<PerfInput>& PerfInputs();

// What `cat path > /dev/null` costs in process: the fastest of five reads
// of the whole file through a 1 MiB buffer (warm page cache). 0 when the
// file cannot be opened.
double CatSeconds(const std::string& path);

// HLO text made up for the lexer: `count` instructions, each carrying long
// metadata and backend_config strings and bracketed attributes, so the
// scanning loops dominate.
std::string AttributeHeavyModule(int count);

}  // namespace hlomem::perf

#endif  // HLOMEM_TESTS_PERF_PERF_INPUTS_H_
