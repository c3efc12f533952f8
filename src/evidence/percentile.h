// Nearest-rank percentiles: the value at rank ceil(p/100 * n) of the sorted sample, so
// every reported percentile is an observed value (no interpolation).
#pragma once

#include <vector>

namespace udon::evidence {

// percent in [1, 100]; 0 for an empty sample.
double NearestRank(std::vector<double> values, int percent);

}  // namespace udon::evidence
