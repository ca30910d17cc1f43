// The HLO text files under a directory, for the tests that run over every
// real module we have (the shared corpus, the committed JAX dumps).
#ifndef HLOMEM_TESTS_HLO_HLO_FILES_H_
#define HLOMEM_TESTS_HLO_HLO_FILES_H_

#include <string>
#include <vector>

namespace hlomem::hlo {

// Files named *.hlo, *.hlo.txt or *optimizations.txt under `dir`, at any
// depth, sorted; none when `dir` is absent.
std::vector<std::string> HloTextFilesUnder(const std::string& dir);

}  // namespace hlomem::hlo

#endif  // HLOMEM_TESTS_HLO_HLO_FILES_H_
