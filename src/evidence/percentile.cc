#include "evidence/percentile.h"

#include <algorithm>

namespace udon::evidence {

double NearestRank(std::vector<double> values, int percent) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // ceil(percent * n / 100) in integers: no floating-point rounding at the boundaries.
  const std::size_t n = values.size();
  const std::size_t p = static_cast<std::size_t>(std::clamp(percent, 1, 100));
  const std::size_t rank = (p * n + 99) / 100;
  return values[std::clamp<std::size_t>(rank, 1, n) - 1];
}

}  // namespace udon::evidence
