#ifndef CREW_DETAIL_COROUTINE_CHAIN_HPP
#define CREW_DETAIL_COROUTINE_CHAIN_HPP

// Who owns a chain of crew coroutines while it is suspended on a pool: the
// queued resume_task, until it runs (crew/coroutine.hpp says what that
// means at shutdown), and how a refused resumption becomes an exception
// from the co_await. The chain's stop source lives with its root.

#include <crew/detail/coroutine/driver.hpp>
#include <crew/detail/scoped_record.hpp>
#include <crew/errors.hpp>

#include <coroutine>
#include <exception>
#include <stop_token>
#include <utility>

namespace crew::detail {

// The root of a spawned chain: its frame, how to complete the spawn's
// future when the chain is dropped by a reject policy (destroying the frame
// alone completes it with cancellation_error), and the chain's stop source,
// which the spawn's future requests on cancel(true) (it lives in the
// future's state, which the root frame holds until it ends).
struct coroutine_root {
    std::coroutine_handle<> frame;
    void* owner = nullptr;
    void (*reject)(void* owner, std::exception_ptr why) noexcept = nullptr;
    const std::stop_source* stop = nullptr;
};

// Destroys the chain whose resumption was dropped: with `why`, the spawn's
// future reports it; without, cancellation_error. A chain crew did not make
// (no root) is not ours to destroy.
inline void abandon_chain(coroutine_root* root, std::exception_ptr why) noexcept {
    if (!root) return;
    if (why && root->reject) root->reject(root->owner, std::move(why));
    root->frame.destroy();
}

// The root a coroutine's chain has, if its promise knows one (a coroutine
// of another library's does not: crew then never destroys it).
template <class Promise>
coroutine_root* root_of(std::coroutine_handle<Promise> h) noexcept {
    if constexpr (requires { h.promise().chain_root(); }) return h.promise().chain_root();
    else return nullptr;
}

// A resumption being handed to a pool from inside await_suspend, on this
// thread's stack. A resume_task dropped during that call (a reject policy
// discarding it, or abort_policy's throw unwinding it) must not destroy the
// chain, which is about to be resumed with the exception instead; it marks
// the record. Nested (caller_runs_policy resumes inline): saved and restored.
struct submission {
    std::coroutine_handle<> frame;
    bool dropped = false;
};
inline thread_local submission* current_submission = nullptr;

// The queued half of a resumption: a reporting callable (16 bytes, inline
// in a crew::task) that owns the chain until it runs.
class resume_task {
  public:
    resume_task(std::coroutine_handle<> frame, coroutine_root* root) noexcept : frame_(frame), root_(root) {}
    resume_task(resume_task&& other) noexcept
        : frame_(std::exchange(other.frame_, nullptr)), root_(other.root_) {}
    resume_task& operator=(resume_task&&) = delete;
    ~resume_task() { drop(nullptr); }

    // Gives up ownership first: once resumed, the chain belongs to whatever
    // it suspends on next, or ends.
    std::exception_ptr run_and_report(bool) {
        drive(std::exchange(frame_, nullptr));
        return {};
    }
    void operator()() { (void)run_and_report(false); }
    void abandon(std::exception_ptr why, bool) noexcept { drop(std::move(why)); }
    bool is_cancelled() const noexcept { return false; }

  private:
    void drop(std::exception_ptr why) noexcept {
        const auto frame = std::exchange(frame_, nullptr);
        if (!frame) return;
        if (current_submission && current_submission->frame == frame) {
            current_submission->dropped = true; // the co_await throws instead
            return;
        }
        abandon_chain(root_, std::move(why));
    }

    std::coroutine_handle<> frame_;
    coroutine_root* root_;
};

// Hands `frame`'s resumption to `submit` (which queues a resume_task on a
// pool), from inside await_suspend. A refused resumption throws from the
// co_await: the policy's exception, or rejected_execution_error.
template <class Submit>
void submit_resumption(std::coroutine_handle<> frame, Submit submit) {
    submission record{frame};
    {
        const scoped_record<submission*> in_flight(current_submission, &record);
        submit();
    }
    if (record.dropped) throw rejected_execution_error("crew: the pool refused to resume the coroutine");
}

} // namespace crew::detail

#endif
