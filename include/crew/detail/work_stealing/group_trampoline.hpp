#ifndef CREW_DETAIL_WORK_STEALING_GROUP_TRAMPOLINE_HPP
#define CREW_DETAIL_WORK_STEALING_GROUP_TRAMPOLINE_HPP

// The second way into a task_group (detail/work_stealing/task_group_core.hpp
// has both): from any thread but the forking worker, run() hands the pool
// this 8-byte task for the group's entry, and whoever claims the entry first
// decides its fate.

#include <crew/detail/work_stealing/task_group_core.hpp>
#include <crew/task.hpp>

#include <exception>
#include <utility>

namespace crew::detail {

// The entry of run() being handed to the executor on this thread, so that a
// trampoline destroyed unrun inside that execute() call (abort_policy's
// throw unwinding it) leaves the verdict to run(): run() rethrows, and the
// group records nothing. Null when run() sees the drop.
inline thread_local group_entry* entry_being_submitted = nullptr;

// The pool's task for one entry: 8 bytes, stored inline in a crew::task.
// A reporting callable, so that a discard, a before_execute failure or a
// drop reaches the group instead of vanishing.
class group_trampoline {
  public:
    explicit group_trampoline(group_entry* e) noexcept : entry_(e) {}
    group_trampoline(group_trampoline&& other) noexcept : entry_(std::exchange(other.entry_, nullptr)) {}
    group_trampoline& operator=(group_trampoline&&) = delete;

    // Destroyed unrun (shutdown_now's list, a reject policy that lets it
    // die): the entry is dropped with cancellation_error, except inside
    // run()'s own execute() call, where run() decides.
    ~group_trampoline() {
        group_entry* e = entry_;
        if (!e) return;
        if (e->claim()) {
            if (entry_being_submitted == e) {
                entry_being_submitted = nullptr;
                e->group().drop_claimed(*e, nullptr);
            } else {
                e->group().drop_claimed(*e, make_error<cancellation_error>("crew: task_group task destroyed unrun"));
            }
        }
        e->release();
    }

    void operator()() { (void)run_and_report(false); }

    std::exception_ptr run_and_report(bool) noexcept {
        group_entry* e = std::exchange(entry_, nullptr);
        std::exception_ptr error;
        if (e->claim()) error = e->group().run_claimed(*e);
        e->release();
        return error;
    }

    void abandon(std::exception_ptr why, bool) noexcept {
        group_entry* e = std::exchange(entry_, nullptr);
        if (e->claim()) e->group().drop_claimed(*e, std::move(why));
        e->release();
    }

    // Run or dropped elsewhere already: the pool may drop it (purge).
    bool is_cancelled() const noexcept { return entry_ != nullptr && entry_->claimed(); }

    template <class E>
    static std::exception_ptr make_error(const char* what) noexcept {
        try {
            return std::make_exception_ptr(E(what));
        } catch (...) {
            return std::current_exception(); // std::bad_alloc: still an answer
        }
    }

  private:
    group_entry* entry_;
};

static_assert(reporting_callable<group_trampoline>);

} // namespace crew::detail

#endif
