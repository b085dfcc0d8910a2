// A member for the test callables that count how often a task destroyed
// them: it counts the destruction of the object first built, followed
// through its moves, and none of the moved-from shells a task leaves behind
// when it relocates its callable. Shared by the unit tests of crew::task,
// the reject policies and the thread factory.
//
// Included relatively ("../common/lifetime.hpp"), like time_factor.hpp.
#ifndef CREW_TEST_COMMON_LIFETIME_HPP
#define CREW_TEST_COMMON_LIFETIME_HPP

#include <utility>

namespace crew_test_common {

// Adds one to the counter it was given when the object that owns the
// counter (the last one moved into) is destroyed. `Count` is an integer, or
// an atomic one where another thread destroys the callable.
template <class Count>
class destruction_counter {
  public:
    explicit destruction_counter(Count& destroyed) noexcept : destroyed_(&destroyed) {}
    destruction_counter(destruction_counter&& other) noexcept : destroyed_(std::exchange(other.destroyed_, nullptr)) {}
    destruction_counter& operator=(destruction_counter&&) = delete;
    ~destruction_counter() {
        if (destroyed_ != nullptr) ++*destroyed_;
    }

  private:
    Count* destroyed_;
};

} // namespace crew_test_common

#endif
