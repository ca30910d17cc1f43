// The detector functions kDetectors (detectors.cc) registers, one per file.
// Each appends the findings of one kind of waste; RunDetectors applies the
// threshold and orders them.
#ifndef HLOMEM_LIB_DETECT_DETECTOR_LIST_H_
#define HLOMEM_LIB_DETECT_DETECTOR_LIST_H_

#include <cstdint>
#include <vector>

#include "lib/detect/detectors.h"

namespace hlomem::detect {

void DetectDuplicateBuffers(const DetectorInput& input, int64_t min_bytes,
                            std::vector<Finding>* findings);
void DetectDtypeWidening(const DetectorInput& input, int64_t min_bytes,
                         std::vector<Finding>* findings);
void DetectMaterializedBroadcasts(const DetectorInput& input, int64_t min_bytes,
                                  std::vector<Finding>* findings);
void DetectMissedDonations(const DetectorInput& input, int64_t min_bytes,
                           std::vector<Finding>* findings);
void DetectLayoutCopies(const DetectorInput& input, int64_t min_bytes,
                        std::vector<Finding>* findings);
void DetectFragmentation(const DetectorInput& input, int64_t min_bytes,
                         std::vector<Finding>* findings);
void DetectPaddingWaste(const DetectorInput& input, int64_t min_bytes,
                        std::vector<Finding>* findings);
void DetectLargeConstants(const DetectorInput& input, int64_t min_bytes,
                          std::vector<Finding>* findings);
void DetectLoopCarriedCopies(const DetectorInput& input, int64_t min_bytes,
                             std::vector<Finding>* findings);
void DetectSavedActivations(const DetectorInput& input, int64_t min_bytes,
                            std::vector<Finding>* findings);
void DetectXlaDisagreement(const DetectorInput& input, int64_t min_bytes,
                           std::vector<Finding>* findings);

}  // namespace hlomem::detect

#endif  // HLOMEM_LIB_DETECT_DETECTOR_LIST_H_
