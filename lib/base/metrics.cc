#include "lib/base/metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "absl/strings/str_format.h"
#include "lib/base/bytes.h"

namespace hlomem {
namespace {

struct Phase {
  const char* name;
  double seconds = 0;
  int64_t calls = 0;
  int64_t page_faults = 0;
  int64_t rss = 0;       // at the end of its last call
  int64_t peak_rss = 0;  // high-water mark at the end of its last call
};

std::atomic<bool> g_enabled{false};
std::atomic<Metrics::PhaseObserver> g_phase_observer{nullptr};
std::mutex g_mutex;
std::vector<Phase>& Phases() {
  static auto* phases = new std::vector<Phase>();
  return *phases;
}

}  // namespace

void Metrics::Enable() { g_enabled.store(true, std::memory_order_relaxed); }
bool Metrics::enabled() { return g_enabled.load(std::memory_order_relaxed); }
void Metrics::ObservePhases(PhaseObserver observer) {
  g_phase_observer.store(observer, std::memory_order_relaxed);
}
Metrics::PhaseObserver Metrics::phase_observer() {
  return g_phase_observer.load(std::memory_order_relaxed);
}

void Metrics::Record(const char* name, double seconds, int64_t page_faults) {
  const int64_t rss = CurrentRssBytes();
  const int64_t peak = PeakRssBytes();
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<Phase>& phases = Phases();
  Phase* phase = nullptr;
  for (Phase& p : phases) {
    if (std::strcmp(p.name, name) == 0) phase = &p;
  }
  if (phase == nullptr) {
    phases.push_back(Phase{name});
    phase = &phases.back();
  }
  phase->seconds += seconds;
  ++phase->calls;
  phase->page_faults += page_faults;
  phase->rss = rss;
  phase->peak_rss = peak;
}

std::string Metrics::Report(double total_seconds) {
  std::lock_guard<std::mutex> lock(g_mutex);
  int width = 10;
  for (const Phase& p : Phases()) width = std::max(width, static_cast<int>(std::strlen(p.name)));
  std::string out = absl::StrFormat("%-*s %9s %6s %9s %11s %11s\n", width, "phase", "seconds",
                                    "calls", "faults", "rss", "peak_rss");
  for (const Phase& p : Phases()) {
    absl::StrAppendFormat(&out, "%-*s %9.3f %6d %9d %11s %11s\n", width, p.name, p.seconds,
                          p.calls, p.page_faults, HumanBytes(p.rss), HumanBytes(p.peak_rss));
  }
  absl::StrAppendFormat(&out, "%-*s %9.3f %6s %9d %11s %11s\n", width, "total", total_seconds,
                        "", MinorPageFaults(), HumanBytes(CurrentRssBytes()),
                        HumanBytes(PeakRssBytes()));
  return out;
}

int64_t CurrentRssBytes() {
  // /proc/self/statm: size resident shared ... in pages.
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long long size = 0, resident = 0;
  const int read = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  return read == 2 ? resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

int64_t PeakRssBytes() {
  struct rusage usage;
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

int64_t MinorPageFaults() {
  struct rusage usage;
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<int64_t>(usage.ru_minflt);
}

}  // namespace hlomem
