// Counts heap allocations made by the current thread while a guard is alive. The test
// executable that links allocation_counter.cpp interposes malloc and friends (Eigen
// allocates through malloc, operator new does too), so nothing escapes the count.
#pragma once

namespace qs::test {

class CountAllocations {
 public:
  CountAllocations();
  ~CountAllocations();
  CountAllocations(const CountAllocations&) = delete;
  CountAllocations& operator=(const CountAllocations&) = delete;
  /// Allocations made by this thread since the guard was created.
  long count() const;

 private:
  long start_;
};

}  // namespace qs::test
