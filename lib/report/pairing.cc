#include "lib/report/pairing.h"

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hlomem::report {
namespace {

class Pairer {
 public:
  Pairer(const Report& a, const Report& b)
      : a_(a), b_(b), partner_of_b_(b.modules.size(), kUnpaired), a_taken_(a.modules.size(), false),
        basis_of_b_(b.modules.size(), PairBasis::kNone) {}

  // Pairs the modules left on each side whose keys are equal, in order
  // among equals; `key` returns "" for a module the rule cannot judge.
  void PairByKey(PairBasis basis, const std::function<std::string(const ModuleReport&)>& key) {
    std::map<std::string, std::deque<size_t>> waiting;  // key -> a's modules left, in order
    for (size_t k = 0; k < a_.modules.size(); ++k) {
      if (a_taken_[k]) continue;
      std::string kk = key(a_.modules[k]);
      if (!kk.empty()) waiting[std::move(kk)].push_back(k);
    }
    for (size_t j = 0; j < b_.modules.size(); ++j) {
      if (partner_of_b_[j] != kUnpaired) continue;
      const std::string kk = key(b_.modules[j]);
      if (kk.empty()) continue;
      auto it = waiting.find(kk);
      if (it == waiting.end() || it->second.empty()) continue;
      Pair(it->second.front(), j, basis);
      it->second.pop_front();
    }
  }

  // Pairs by name alone where each side has as many modules of the name
  // left: with more on one side, which one is new cannot be told.
  void PairByNameWhereCountsAgree() {
    std::map<std::string, int> left_a, left_b;
    for (size_t k = 0; k < a_.modules.size(); ++k) {
      if (!a_taken_[k]) ++left_a[a_.modules[k].name];
    }
    for (size_t j = 0; j < b_.modules.size(); ++j) {
      if (partner_of_b_[j] == kUnpaired) ++left_b[b_.modules[j].name];
    }
    PairByKey(PairBasis::kName, [&](const ModuleReport& m) {
      auto in_a = left_a.find(m.name);
      auto in_b = left_b.find(m.name);
      const bool agree = in_a != left_a.end() && in_b != left_b.end() && in_a->second == in_b->second;
      return agree ? absl::StrCat("=", m.name) : std::string();
    });
  }

  void PairSoleModules() {
    if (a_.modules.size() == 1 && b_.modules.size() == 1 && !a_taken_[0]) Pair(0, 0, PairBasis::kOnly);
  }

  std::vector<ModulePair> Pairs() const {
    std::vector<ModulePair> out;
    out.reserve(a_.modules.size() + b_.modules.size());
    for (size_t j = 0; j < b_.modules.size(); ++j) {
      const size_t k = partner_of_b_[j];
      out.push_back({k == kUnpaired ? nullptr : &a_.modules[k], &b_.modules[j], basis_of_b_[j]});
    }
    for (size_t k = 0; k < a_.modules.size(); ++k) {
      if (!a_taken_[k]) out.push_back({&a_.modules[k], nullptr, PairBasis::kNone});
    }
    return out;
  }

 private:
  static constexpr size_t kUnpaired = ~size_t{0};

  void Pair(size_t k, size_t j, PairBasis basis) {
    a_taken_[k] = true;
    partner_of_b_[j] = k;
    basis_of_b_[j] = basis;
  }

  const Report& a_;
  const Report& b_;
  std::vector<size_t> partner_of_b_;
  std::vector<bool> a_taken_;
  std::vector<PairBasis> basis_of_b_;
};

// "(a, (b, c))->d" -> ({"a", "(b, c)"}, "d"); nullopt when not in that form.
std::optional<std::pair<std::vector<absl::string_view>, absl::string_view>> SplitSignature(
    absl::string_view signature) {
  const size_t arrow = signature.rfind(")->");
  if (signature.empty() || signature.front() != '(' || arrow == absl::string_view::npos) {
    return std::nullopt;
  }
  std::vector<absl::string_view> parameters;
  const absl::string_view list = signature.substr(1, arrow - 1);
  int depth = 0;
  size_t start = 0;
  for (size_t k = 0; k <= list.size(); ++k) {
    const char c = k < list.size() ? list[k] : ',';
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      if (k > start) parameters.push_back(absl::StripAsciiWhitespace(list.substr(start, k - start)));
      start = k + 1;
    }
  }
  return std::make_pair(std::move(parameters), signature.substr(arrow + 3));
}

}  // namespace

std::string SignatureChange(absl::string_view before, absl::string_view after) {
  if (before == after) return "";
  const auto a = SplitSignature(before);
  const auto b = SplitSignature(after);
  if (!a || !b || a->first.size() != b->first.size()) return absl::StrCat("was ", before, ", now ", after);
  std::vector<std::string> changes;
  for (size_t k = 0; k < a->first.size(); ++k) {
    if (a->first[k] != b->first[k]) {
      changes.push_back(absl::StrCat("parameter ", k, " ", a->first[k], " -> ", b->first[k]));
    }
  }
  if (a->second != b->second) changes.push_back(absl::StrCat("result ", a->second, " -> ", b->second));
  return absl::StrJoin(changes, "; ");
}

absl::string_view PairBasisName(PairBasis basis) {
  switch (basis) {
    case PairBasis::kProgram: return "program";
    case PairBasis::kSignature: return "signature";
    case PairBasis::kName: return "name";
    case PairBasis::kOnly: return "only";
    case PairBasis::kNone: return "none";
  }
  return "";
}

std::vector<ModulePair> PairModules(const Report& a, const Report& b, bool pair_sole_modules) {
  Pairer pairer(a, b);
  // '\n' cannot occur in a module name or a shape, so it separates fields.
  pairer.PairByKey(PairBasis::kProgram, [](const ModuleReport& m) {
    if (m.signature.empty() || m.instruction_count <= 0) return std::string();
    return absl::StrCat(m.name, "\n", m.signature, "\n", m.instruction_count);
  });
  pairer.PairByKey(PairBasis::kSignature, [](const ModuleReport& m) {
    return m.signature.empty() ? std::string() : absl::StrCat(m.name, "\n", m.signature);
  });
  pairer.PairByNameWhereCountsAgree();
  if (pair_sole_modules) pairer.PairSoleModules();
  return pairer.Pairs();
}

}  // namespace hlomem::report
