#ifndef CREW_DETAIL_SCOPED_RECORD_HPP
#define CREW_DETAIL_SCOPED_RECORD_HPP

// A thread-local record set for the length of a scope: the pointer a
// nested call must see (the coroutine driver, the submission in flight, the
// task-group entry being submitted, the isolation region), put back to the
// outer one on every way out, a throw included. One helper, so that every
// record nests and unwinds the same way.

#include <utility>

namespace crew::detail {

template <class T>
class scoped_record {
  public:
    // `slot` is a thread_local of the calling thread; it holds `value` until
    // this object dies, then what it held before.
    scoped_record(T& slot, T value) noexcept : slot_(slot), outer_(std::exchange(slot, value)) {}
    ~scoped_record() { slot_ = outer_; }
    scoped_record(const scoped_record&) = delete;
    scoped_record& operator=(const scoped_record&) = delete;

  private:
    T& slot_;
    T outer_;
};

} // namespace crew::detail

#endif
