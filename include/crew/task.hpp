#ifndef CREW_TASK_HPP
#define CREW_TASK_HPP

/// \file
/// `crew::task`, the move-only `void()` callable every queue holds, and
/// `crew::with_priority`, which tags a callable for `priority_queue`.

#include <crew/errors.hpp>
#include <crew/schedule_slot.hpp>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace crew {

class task;

/// A callable tagged with a priority; made by `with_priority`.
/// `priority_queue` runs higher priorities first; other queues ignore the tag.
template <class F>
struct prioritized {
    int priority;
    F function;
};

/// Tags `f` with `priority` (higher runs first; an untagged callable has 0).
/// Works with `execute` and `submit`.
template <class F>
prioritized<std::decay_t<F>> with_priority(int priority, F&& f) {
    return {priority, std::forward<F>(f)};
}

namespace detail {

template <class T>
inline constexpr bool is_prioritized = false;
template <class F>
inline constexpr bool is_prioritized<prioritized<F>> = true;

// The protocol of a callable that reports its own outcome to a future.
// Plain callables do not model it and pay nothing for it.
//   run_and_report(heard): runs; returns the exception it stored in its
//                     future (a periodic callable whose run throws lets it
//                     escape instead: its future keeps it, unreported, and
//                     the caller reports it at once). `heard`: the caller
//                     shows that exception to a hook, so a future dropped
//                     unread need not report it.
//   abandon(e, report): it will never run; complete the future with e, which
//                     is reported if the future is dropped unread and `report`.
//   is_cancelled():   its future was cancelled, so running it is pointless.
template <class F>
concept reporting_callable = requires(F& f, const F& cf, std::exception_ptr e, bool b) {
    { f.run_and_report(b) } -> std::same_as<std::exception_ptr>;
    { f.abandon(e, b) } noexcept;
    { cf.is_cancelled() } noexcept -> std::same_as<bool>;
};

// What a periodic callable asks for after a run: to be queued again at `due`
// in `slot`. No slot: it is finished (failed, cancelled, or not yet run).
struct next_run_request {
    schedule_slot* slot = nullptr;
    std::chrono::steady_clock::time_point due{};
    explicit operator bool() const noexcept { return slot != nullptr; }
};

// A reporting callable that may run more than once: after each run the
// worker asks it for its next run and queues the same task again, so a
// periodic schedule travels one way, from the task to the worker.
template <class F>
concept periodic_callable = reporting_callable<F> && requires(const F& cf) {
    { cf.next_run() } noexcept -> std::same_as<next_run_request>;
};

// A callable that knows when it became ready to run: stamped (below) when a
// pool with a task observer accepted it, or a scheduled task (its due time).
template <class F>
concept stamped_callable = requires(const F& cf) {
    { cf.queued_at() } noexcept -> std::same_as<std::chrono::steady_clock::time_point>;
};

// `F` and the time its pool accepted it: what a pool with a task observer
// queues instead of `F` (8 bytes more, so only such a pool pays for them).
// Forwards the reporting protocol when `F` has it; `F` may be a whole
// crew::task (a ready-made task the pool stamps), which speaks it too.
template <class F>
class stamped {
  public:
    template <class G>
    stamped(G&& g, std::chrono::steady_clock::time_point queued) : function_(std::forward<G>(g)), queued_(queued) {}

    void operator()() { std::invoke(function_); }
    std::exception_ptr run_and_report(bool heard)
        requires reporting_callable<F> || std::same_as<F, task>
    {
        if constexpr (std::same_as<F, task>) return function_.run(heard);
        else return function_.run_and_report(heard);
    }
    void abandon(std::exception_ptr why, bool report) noexcept
        requires reporting_callable<F> || std::same_as<F, task>
    {
        function_.abandon(std::move(why), report);
    }
    bool is_cancelled() const noexcept
        requires reporting_callable<F> || std::same_as<F, task>
    {
        return function_.is_cancelled();
    }
    std::chrono::steady_clock::time_point queued_at() const noexcept { return queued_; }

  private:
    F function_;
    std::chrono::steady_clock::time_point queued_;
};

} // namespace detail

/// A move-only, type-erased `void()` callable: what the queues hold.
///
/// A callable of up to `inline_capacity` bytes (alignment at most
/// `alignof(std::max_align_t)`, nothrow-movable) is stored inline, so wrapping
/// a small lambda allocates nothing; larger ones go to the heap. Dispatch is
/// through a static table of function pointers, not virtual calls.
///
/// Thread safety: none; a task is owned by one thread at a time.
class task {
  public:
    /// Bytes of callable stored without allocating.
    static constexpr std::size_t inline_capacity = 48;

    /// An empty task (`bool(task{})` is false).
    task() noexcept = default;
    task(std::nullptr_t) noexcept {}

    /// Wraps `f`. Its result, if any, is discarded.
    template <class F>
        requires(!std::same_as<std::remove_cvref_t<F>, task> &&
                 !detail::is_prioritized<std::remove_cvref_t<F>> &&
                 std::invocable<std::decay_t<F>&>)
    task(F&& f) {
        emplace<std::decay_t<F>>(std::forward<F>(f));
    }

    /// Wraps a callable tagged by `with_priority`, keeping its priority.
    template <class F>
    task(prioritized<F> p) : task(std::move(p.function)) {
        priority_ = p.priority;
    }

    task(task&& other) noexcept : ops_(other.ops_), priority_(other.priority_) {
        if (ops_) {
            ops_->relocate(other.storage_, storage_);
            other.ops_ = nullptr;
        }
    }

    task& operator=(task&& other) noexcept {
        if (this != &other) {
            reset();
            if (other.ops_) {
                other.ops_->relocate(other.storage_, storage_);
                ops_ = std::exchange(other.ops_, nullptr);
            }
            priority_ = other.priority_;
        }
        return *this;
    }

    ~task() { reset(); }

    /// True if the task holds a callable.
    explicit operator bool() const noexcept { return ops_ != nullptr; }

    /// Runs the callable. Precondition: not empty. An exception escaping a
    /// plain callable propagates; a future's task keeps it for its future,
    /// except a periodic task's, which also propagates.
    void operator()() { (void)run(); }

    /// Runs the callable and returns the exception a future's task stored in
    /// its future (null otherwise), so that an executor can show it to its
    /// `after_execute` hook. Exceptions of plain callables propagate.
    /// `heard`: the caller shows that exception to someone; if false, a
    /// future that is destroyed without `get()` reports it on standard error.
    std::exception_ptr run(bool heard = false) { return ops_->run(storage_, heard); }

    /// The priority given by `with_priority`, or 0.
    int priority() const noexcept { return priority_; }

    /// True if the task belongs to a cancelled future (`purge()` drops these).
    bool is_cancelled() const noexcept { return ops_ && ops_->is_cancelled && ops_->is_cancelled(storage_); }

    /// For a scheduled executor, after `run()`: a periodic task that wants to
    /// run again says when and in which slot; any other task answers with an
    /// empty request. The executor then queues this same task again.
    detail::next_run_request next_run() const noexcept {
        return ops_ && ops_->next_run ? ops_->next_run(storage_) : detail::next_run_request{};
    }

    /// When the task became ready to run, if it knows: a pool with a task
    /// observer stamps the tasks it accepts, and a scheduled task answers
    /// with its due time. Otherwise `time_point::min()`.
    std::chrono::steady_clock::time_point queued_at() const noexcept {
        return ops_ && ops_->queued_at ? ops_->queued_at(storage_) : std::chrono::steady_clock::time_point::min();
    }

    /// Destroys the callable without running it; a future's task first
    /// completes its future with `why`. Afterwards the task is empty.
    /// Returns true if a future received `why`. With `report_if_unread`, a
    /// future destroyed without `get()` reports `why` on standard error.
    bool abandon(std::exception_ptr why, bool report_if_unread = false) noexcept {
        const bool listens = ops_ && ops_->abandon;
        if (listens) ops_->abandon(storage_, std::move(why), report_if_unread);
        reset();
        return listens;
    }

    /// Abandons the task because a reject policy discarded it: a future's
    /// task completes with `rejected_execution_error`. Afterwards it is empty.
    void reject() noexcept {
        if (ops_ && ops_->abandon) {
            std::exception_ptr why;
            try {
                why = std::make_exception_ptr(rejected_execution_error("crew: task rejected by the pool"));
            } catch (...) {
                why = std::current_exception(); // std::bad_alloc: still an answer
            }
            ops_->abandon(storage_, std::move(why), false);
        }
        reset();
    }

    /// Destroys the callable; the task becomes empty. A future's task that
    /// never ran completes its future with `cancellation_error`.
    void reset() noexcept {
        if (ops_) std::exchange(ops_, nullptr)->destroy(storage_);
    }

  private:
    struct ops_table {
        std::exception_ptr (*run)(void* self, bool heard);
        void (*relocate)(void* from, void* to) noexcept;
        void (*destroy)(void* self) noexcept;
        void (*abandon)(void* self, std::exception_ptr why, bool report) noexcept; // null: nobody listens
        bool (*is_cancelled)(const void* self) noexcept;              // null: never
        detail::next_run_request (*next_run)(const void* self) noexcept; // null: runs once
        std::chrono::steady_clock::time_point (*queued_at)(const void* self) noexcept; // null: not stamped
    };

    template <class F>
    static constexpr bool fits_inline = sizeof(F) <= inline_capacity &&
                                        alignof(F) <= alignof(std::max_align_t) &&
                                        std::is_nothrow_move_constructible_v<F>;

    // The table entries for one callable type F, stored inline or on the heap.
    template <class F>
    struct model {
        static F& get(void* storage) noexcept {
            if constexpr (fits_inline<F>) return *std::launder(static_cast<F*>(storage));
            else return **static_cast<F**>(storage);
        }
        static std::exception_ptr run(void* self, [[maybe_unused]] bool heard) {
            if constexpr (detail::reporting_callable<F>) return get(self).run_and_report(heard);
            else {
                std::invoke(get(self));
                return {};
            }
        }
        static void relocate(void* from, void* to) noexcept {
            if constexpr (fits_inline<F>) {
                ::new (to) F(std::move(get(from)));
                get(from).~F();
            } else {
                *static_cast<F**>(to) = *static_cast<F**>(from);
            }
        }
        static void destroy(void* self) noexcept {
            if constexpr (fits_inline<F>) get(self).~F();
            else delete &get(self);
        }
        static void abandon(void* self, std::exception_ptr why, [[maybe_unused]] bool report) noexcept {
            if constexpr (detail::reporting_callable<F>) get(self).abandon(std::move(why), report);
        }
        static bool is_cancelled(const void* self) noexcept {
            if constexpr (detail::reporting_callable<F>) return get(const_cast<void*>(self)).is_cancelled();
            else return false;
        }
        static detail::next_run_request next_run(const void* self) noexcept {
            if constexpr (detail::periodic_callable<F>) return get(const_cast<void*>(self)).next_run();
            else return {};
        }
        static std::chrono::steady_clock::time_point queued_at(const void* self) noexcept {
            if constexpr (detail::stamped_callable<F>) return get(const_cast<void*>(self)).queued_at();
            else return {};
        }
        static constexpr ops_table table{
            &run, &relocate, &destroy,
            detail::reporting_callable<F> ? &abandon : nullptr,
            detail::reporting_callable<F> ? &is_cancelled : nullptr,
            detail::periodic_callable<F> ? &next_run : nullptr,
            detail::stamped_callable<F> ? &queued_at : nullptr,
        };
    };

    template <class F, class G>
    void emplace(G&& g) {
        if constexpr (fits_inline<F>) ::new (static_cast<void*>(storage_)) F(std::forward<G>(g));
        else *reinterpret_cast<F**>(storage_) = new F(std::forward<G>(g));
        ops_ = &model<F>::table;
    }

    alignas(std::max_align_t) std::byte storage_[inline_capacity];
    const ops_table* ops_ = nullptr;
    int priority_ = 0;
};

} // namespace crew

#endif
