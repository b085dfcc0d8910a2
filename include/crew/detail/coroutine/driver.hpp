#ifndef CREW_DETAIL_COROUTINE_DRIVER_HPP
#define CREW_DETAIL_COROUTINE_DRIVER_HPP

// The trampoline crew resumes coroutines through, so that a chain of
// co_awaited coroutines runs in constant stack whatever the compiler does
// with symmetric transfer (GCC 12 makes it a tail call only at -O2; below
// that, every nested co_await would take a stack frame).
//
// drive(h) resumes h and then whatever it hands on: a crew coroutine that
// starts a child or ends (transfer) while this driver runs it leaves the
// next handle in the driver and returns, instead of resuming it from inside
// its own frame. A coroutine resumed by anyone else (another library's
// awaitable) falls back to plain symmetric transfer.

#include <crew/detail/scoped_record.hpp>

#include <coroutine>
#include <utility>

namespace crew::detail {

struct coroutine_driver {
    std::coroutine_handle<> current; // the coroutine this driver resumed last
    std::coroutine_handle<> next;    // what to resume when it returns
};
inline thread_local coroutine_driver* active_driver = nullptr;

// Resumes `h`, then every handle handed on, until none is. Nested drivers
// (a coroutine resumed inline from inside another) restore the outer one.
inline void drive(std::coroutine_handle<> h) {
    coroutine_driver driver{nullptr, h};
    // Restored on a throw too: only another library's coroutine can throw
    // out of resume().
    const scoped_record<coroutine_driver*> active(active_driver, &driver);
    while (driver.next) {
        driver.current = std::exchange(driver.next, nullptr);
        driver.current.resume();
    }
}

// For await_suspend and final_suspend: `from` suspends and control passes
// to `to`, through the driver running `from` on this thread if there is
// one, else by symmetric transfer.
inline std::coroutine_handle<> transfer(std::coroutine_handle<> from, std::coroutine_handle<> to) noexcept {
    if (active_driver != nullptr && active_driver->current == from) {
        active_driver->next = to;
        return std::noop_coroutine();
    }
    return to;
}

} // namespace crew::detail

#endif
