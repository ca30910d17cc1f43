// Per-phase wall time and memory for `hlomem report --stats`, in the spirit
// of ninja's METRIC_RECORD / -d stats. Recording is off until Enable(); a
// ScopedPhase then costs two clock reads and a mutex at its end. Phases may
// run on several threads at once (modules in parallel): their seconds add
// up, so a phase can exceed the wall time.
#ifndef HLOMEM_LIB_BASE_METRICS_H_
#define HLOMEM_LIB_BASE_METRICS_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace hlomem {

class Metrics {
 public:
  static void Enable();
  static bool enabled();
  // Called with each phase's name as it starts, on the thread running it,
  // whether or not recording is on (a progress line follows the phases);
  // nullptr: none. Set it before phases run.
  using PhaseObserver = void (*)(const char* phase);
  static void ObservePhases(PhaseObserver observer);
  static PhaseObserver phase_observer();
  // Adds `seconds` and `page_faults` to phase `name` (a string literal) and
  // notes the RSS now.
  static void Record(const char* name, double seconds, int64_t page_faults);
  // One line per phase in first-recorded order, then the total:
  // "phase  seconds  calls  faults  rss  peak_rss", sizes like "1.21GiB".
  static std::string Report(double total_seconds);
};

// The process's resident set now and its high-water mark, in bytes.
int64_t CurrentRssBytes();
int64_t PeakRssBytes();
// The process's minor page faults so far, every thread's: each is a page
// of memory touched for the first time (cleared by the kernel) or mapped
// back in, so a phase's count says how much fresh memory it paid for.
int64_t MinorPageFaults();

class ScopedPhase {
 public:
  explicit ScopedPhase(const char* name)
      : name_(Metrics::enabled() ? name : nullptr),
        start_(name_ ? std::chrono::steady_clock::now()
                     : std::chrono::steady_clock::time_point()),
        start_faults_(name_ ? MinorPageFaults() : 0) {
    if (const Metrics::PhaseObserver observe = Metrics::phase_observer()) observe(name);
  }
  ~ScopedPhase() {
    if (name_ == nullptr) return;
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    Metrics::Record(name_, elapsed.count(), MinorPageFaults() - start_faults_);
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point start_;
  int64_t start_faults_;
};

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_METRICS_H_
