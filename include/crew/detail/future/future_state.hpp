#ifndef CREW_DETAIL_FUTURE_FUTURE_STATE_HPP
#define CREW_DETAIL_FUTURE_FUTURE_STATE_HPP

// Room detail/future/ (README): everything behind crew::future, promise and
// scheduled_future: the shared state (this header) and its recycler, the
// states derived from other futures (then, within, when_all, when_any), the
// bound calls and submit wrappers that make a task of a callable, and a
// scheduled task's pieces with the link back to its pool. It may include
// detail/sync/, detail/timer/ (deadlines) and detail/work_stealing/ (a get()
// on a pool's worker helps instead of blocking).

#include <crew/detail/sync/parking_word.hpp>
#include <crew/detail/recycler.hpp>
#include <crew/detail/report.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/detail/work_stealing/help.hpp>
#include <crew/detail/work_stealing/worker_context.hpp>
#include <crew/errors.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace crew::detail {

// Where a result of type T waits for get(): nothing for void, a pointer for
// references, an optional otherwise (move-only types welcome).
template <class T>
struct result_slot {
    std::optional<T> value;
    template <class... U>
    void set(U&&... u) {
        if constexpr (std::is_constructible_v<T, U...>) value.emplace(std::forward<U>(u)...);
        else value.emplace(T{std::forward<U>(u)...}); // an aggregate: when_any_result, built here
    }
    T take() { return std::move(*value); }
};
template <class T>
struct result_slot<T&> {
    T* value = nullptr;
    void set(T& t) { value = &t; }
    T& take() { return *value; }
};
template <>
struct result_slot<void> {
    void take() {}
};

// Something to run once a future's state is done: a coroutine to resume, a
// continuation to hand to its executor, a when_all's count. Intrusive: it
// lives wherever its owner keeps it (an awaiter in a coroutine frame, a
// continuation's own state, a when_all's array), so registering one
// allocates nothing. `on_done` runs once, on the completing thread (or on a
// registering one that found the state done), and must not throw; it may
// free the hook. A state may have several (a completion_queue's and an
// awaiting coroutine's).
struct completion_hook {
    void (*on_done)(completion_hook& self) noexcept;
    completion_hook* next = nullptr;  // the state's list; the state's to write
    completion_hook* later = nullptr; // the thread's hooks to run (run_hooks)
};

// Runs the hooks of `list` (linked through `next`) but `skip`; true if
// `skip` was among them. A hook may complete another state, whose hooks run
// inside its frame: a chain of a hundred thousand continuations failing, or
// run inline by caller_runs_policy, would take frames per link and overflow
// the stack. So past a few nested runs on one thread, hooks wait in the
// thread's list (through `later`, not `next`, which forget_hook may still
// read), and the outermost run takes them in turn: bounded stack (Java's
// CompletableFuture.postComplete). Every hook holds its own references to
// what it touches, so none needs its completer's frame.
struct hook_runs {
    static constexpr int inline_depth = 16; // nested runs before hooks wait
    completion_hook* waiting = nullptr;
    int depth = 0;
};
inline thread_local hook_runs this_thread_hooks;

// Runs the hooks this thread deferred, as the outermost run would. A thread
// about to block calls it first: code running deep inside hooks (a
// caller_runs_policy chain sixteen links long, nested coroutines) may wait
// for a future that one of them completes, which would otherwise wait for
// itself. Hooks deferred meanwhile join the list and run in turn: the stack
// stays bounded.
inline void run_deferred_hooks() noexcept {
    hook_runs& runs = this_thread_hooks;
    while (completion_hook* const hook = runs.waiting) {
        runs.waiting = hook->later;
        hook->on_done(*hook);
    }
}

inline bool run_hooks(completion_hook* list, const completion_hook* skip) noexcept {
    hook_runs& runs = this_thread_hooks;
    bool skipped = false;
    const bool deep = runs.depth >= hook_runs::inline_depth;
    ++runs.depth;
    while (list != nullptr) { // read each link before its hook may run and free it
        completion_hook* const hook = list;
        list = hook->next;
        if (hook == skip) {
            skipped = true;
        } else if (deep) {
            hook->later = std::exchange(runs.waiting, hook);
        } else {
            hook->on_done(*hook);
        }
    }
    if (runs.depth == 1) run_deferred_hooks();
    --runs.depth;
    return skipped;
}

// The state a future shares with its task (Java's FutureTask, split in two).
// Status moves pending -> completing -> succeeded | failed, or
// pending -> cancelled, each by CAS: whichever comes first wins, and
// completion is published exactly once. Reference-counted by the future and
// the task; freed through destroy_ so that no virtual call is needed.
//
// Lifetime rule: every member function touches the state only while its
// caller holds a reference. Publishing a completion (waking the waiters) is
// the last thing a completer does with the state; cancel() holds a reference
// of its own across it, because the waiter it wakes may drop the future and
// the task may die at the same moment.
//
// An exception the task threw is reported on standard error when the state
// dies unread: no get() took it and no after_execute hook was shown it.
template <class T>
class future_state {
  public:
    enum status_code : std::uint8_t { pending, completing, succeeded, failed, cancelled };

    using destroy_fn = void (*)(future_state*) noexcept;
    // Called after a successful cancel() (not cancel_unrun()), with its
    // may_interrupt_if_running: a scheduled task uses it to leave its
    // queue, a future derived from others (then, within, when_all...) to
    // cancel those it still waits for.
    using cancel_hook = void (*)(future_state*, bool interrupt) noexcept;

    explicit future_state(destroy_fn destroy, std::stop_source* stop) noexcept : destroy_(destroy), stop_(stop) {}
    future_state(const future_state&) = delete;
    future_state& operator=(const future_state&) = delete;

    // A periodic task hands its reference on to its next run's task.
    void add_ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    void release() noexcept {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
        if (unread_error_.load(std::memory_order_relaxed))
            report_escaped_exception(error_, "a task whose future was dropped without get()");
        destroy_(this);
    }

    bool is_pending() const noexcept { return status_.load(std::memory_order_acquire) == pending; }
    bool is_done() const noexcept { return status_.load() >= succeeded; } // seq_cst: see publish()
    bool is_cancelled() const noexcept { return status_.load(std::memory_order_acquire) == cancelled; }
    bool has_value() const noexcept { return status_.load(std::memory_order_acquire) == succeeded; }

    void wait() const { (void)wait_until(clock::time_point::max()); }

    // As wait(), but on one of a pool's workers the waiter helps
    // (detail/work_stealing/help.hpp): it runs its own spawns and the pool's queued tasks
    // instead of blocking, so a task that waits for another queued behind it
    // cannot deadlock a pool of one.
    void wait_helping() const {
        if (is_done()) return;
        help_until([this] { return is_done(); }, nothing_own, [this](std::chrono::microseconds nap) {
            (void)wait_until(nap_deadline(nap));
        });
    }

    // False if the deadline passed first (time_point::max(): never). Never
    // returns false early. Parks on done_word_ (a futex on Linux): announce,
    // read the word, re-check, sleep unless the word moved (see publish();
    // why this is not an event_count: detail/sync/event_count.hpp).
    bool wait_until(clock::time_point deadline) const {
        const bool timed = deadline != clock::time_point::max();
        for (;;) {
            if (is_done()) return true;
            if (this_thread_hooks.waiting != nullptr) [[unlikely]] { // see run_deferred_hooks
                run_deferred_hooks();
                continue;
            }
            if (timed && clock::now() >= deadline) return false;
            announce_waiter();
            const std::uint32_t seen = done_word_.load();
            if (is_done()) return true;
            done_word_.wait(seen, deadline);
        }
    }

    // The user's cancel (future::cancel). The stop request and the queue's
    // removal come before the waiters are woken, so a get() that reports the
    // cancellation also sees the task asked to stop. Holds a reference of its
    // own throughout: a woken waiter may drop the future, and the task may
    // die, before this returns.
    bool cancel(bool may_interrupt_if_running) noexcept {
        add_ref();
        const bool won = begin(cancelled);
        if (won) {
            if (may_interrupt_if_running && stop_) stop_->request_stop();
            if (on_cancel_) on_cancel_(this, may_interrupt_if_running);
            publish();
        }
        release();
        return won;
    }

    // The task was destroyed without running: cancelled, with no hook (the
    // task is out of every queue by then). Called by the task, which holds
    // its reference until this returns.
    bool cancel_unrun() noexcept {
        if (!begin(cancelled)) return false;
        publish();
        return true;
    }

    // True for the first caller only: a state whose result two futures
    // share (completion_queue's) gives it to one get(), whichever asks first.
    bool claim_result() noexcept { return !result_claimed_.exchange(true, std::memory_order_relaxed); }

    // Precondition: is_done(); called once (future::get). Rethrows what the
    // task threw, which then counts as read.
    T get() {
        switch (status_.load(std::memory_order_acquire)) {
        case cancelled: throw cancellation_error("crew: the task was cancelled");
        case failed:
            unread_error_.store(false, std::memory_order_relaxed); // only a failure can be unread
            std::rethrow_exception(error_);
        default: return result_.take();
        }
    }

    // ---- for the task ---------------------------------------------------

    // True once per state, and only while nobody cancelled it: a queued task
    // never runs once cancelled.
    bool claim_run() noexcept {
        return status_.load(std::memory_order_acquire) == pending && !started_.exchange(true);
    }

    // Both: true if this call completed the state (false: it was done or
    // cancelled already, and the outcome is dropped).
    template <class... U>
    bool set_value(U&&... u) {
        if (!begin_completion()) return false; // cancelled meanwhile: discard the result
        set_claimed_value(std::forward<U>(u)...);
        return true;
    }

    // `report_if_unread`: the error is the task's own and nobody else was
    // shown it, so it goes to standard error if the future never reads it.
    // False for a rejection (a policy's deliberate outcome) and when an
    // after_execute hook receives the error.
    bool set_exception(std::exception_ptr error, bool report_if_unread = false) noexcept {
        if (!begin_completion()) return false;
        set_claimed_exception(std::move(error), report_if_unread);
        return true;
    }

    // set_value and set_exception in two steps, for a completer that must
    // act after it won and before anyone wakes (a deadline cancels its
    // source first, as cancel() requests a stop first): claim_completion()
    // (true once, unless cancelled), then one set_claimed_*.
    bool claim_completion() noexcept { return begin_completion(); }
    template <class... U>
    void set_claimed_value(U&&... u) noexcept {
        try {
            if constexpr (sizeof...(U) > 0) result_.set(std::forward<U>(u)...);
        } catch (...) {
            error_ = std::current_exception();
            finish(failed);
            return;
        }
        finish(succeeded);
    }
    void set_claimed_exception(std::exception_ptr error, bool report_if_unread = false) noexcept {
        error_ = std::move(error);
        unread_error_.store(report_if_unread, std::memory_order_relaxed);
        finish(failed);
    }

    // Whether the error held would be reported if nobody read it: a link
    // that passes it on (then, within) keeps the source's decision.
    bool reports_unread_error() const noexcept { return unread_error_.load(std::memory_order_relaxed); }

    // The future's owner read or deliberately ignored the outcome (say,
    // invoke_any's losers): an error left unread is not reported.
    void forget_error() noexcept { unread_error_.store(false, std::memory_order_relaxed); }

    std::stop_source* stop_source() const noexcept { return stop_; }

    // ---- for what runs when the state is done (a completion_hook) --------

    // Registers `hook` to run once, on the thread that completes the state.
    // False if the state was done already (or became done before the
    // registration was seen): the hook will not run, the caller goes on
    // itself. Hooks run in no particular order. The push is a seq_cst
    // read-modify-write of the list and publish() reads the list seq_cst
    // after its status store: either this sees the state done, or the
    // completer sees the hook. A hook is no parked thread, so it costs the
    // completer no futex wake.
    //
    // Holds a reference of its own: once registered, the hook may run on the
    // completer, and its owner end and drop the future (and the task its
    // reference) before this returns.
    bool call_when_done(completion_hook& hook) noexcept {
        add_ref();
        completion_hook* head = hooks_.load(std::memory_order_relaxed);
        do {
            hook.next = head;
        } while (!hooks_.compare_exchange_weak(head, &hook, std::memory_order_seq_cst, std::memory_order_relaxed));
        bool registered = true;
        // Done meanwhile: the completer may have looked before the push.
        // Whoever takes the list runs it; ours, if taken here, is the
        // caller's to go on with.
        if (is_done()) registered = !run_hooks(hooks_.exchange(nullptr), &hook);
        release();
        return registered;
    }

    // Takes `hook` back if it has not started and no hook was registered
    // after it: true if it never will run. False if the completer took it
    // first (it runs, or has run), or if it is not the last registered (it
    // runs once the state is done).
    bool forget_hook(completion_hook& hook) noexcept {
        completion_hook* expected = &hook;
        return hooks_.compare_exchange_strong(expected, hook.next);
    }

  protected:
    void set_cancel_hook(cancel_hook hook) noexcept { on_cancel_ = hook; }

  private:
    bool begin(status_code next) noexcept {
        std::uint8_t expected = pending;
        return status_.compare_exchange_strong(expected, next);
    }
    bool begin_completion() noexcept { return begin(completing); }
    void finish(status_code final_status) noexcept {
        status_.store(final_status);
        publish();
    }
    // Waiters announce themselves, read the parking word, then check the
    // status; completers set the status, then check for waiters and move the
    // word. All seq_cst (no fence, which ThreadSanitizer cannot see): either
    // the waiter sees the status, or the completer sees the waiter and moves
    // the word after the waiter read it, so its futex wait returns at once.
    // Completions nobody waits for cost two loads. Completion hooks
    // (call_when_done) are a list of their own, read seq_cst after the
    // status store (see there), and run here, on the completer's thread,
    // after the waiters are woken. The completer still holds a reference
    // here (see the lifetime rule), so the word outlives the wake, and the
    // state outlives the hook.
    void announce_waiter() const noexcept { has_waiters_.store(true); }
    void publish() noexcept {
        if (has_waiters_.load()) done_word_.bump_and_wake(std::numeric_limits<int>::max());
        // A load first: a completion without hooks costs no read-modify-write.
        if (hooks_.load() == nullptr) return;
        (void)run_hooks(hooks_.exchange(nullptr), nullptr);
    }
    std::atomic<int> refs_{2}; // the future and the task
    std::atomic<std::uint8_t> status_{pending};
    std::atomic<bool> started_{false};
    mutable std::atomic<bool> has_waiters_{false};
    std::atomic<bool> result_claimed_{false}; // see claim_result
    std::atomic<completion_hook*> hooks_{nullptr}; // a stack of completion hooks; see call_when_done
    // Set by a failing task, cleared by get() or forget_error(); read by the
    // last release, which every earlier access happens before.
    std::atomic<bool> unread_error_{false};
    destroy_fn destroy_;
    cancel_hook on_cancel_ = nullptr;
    std::stop_source* stop_;
    mutable default_parking_word done_word_; // moved by publish() when a waiter announced itself
    std::exception_ptr error_;
    result_slot<T> result_;
};

// The one allocation of a submit: the shared state plus the callable (and,
// for a callable taking a stop token, its stop_source). `Base` is
// future_state<T>, or a state that adds to it (scheduled_state<T>), built
// from (destroy, stop source, base_args...). Its memory comes from the
// recycler: states die on workers and are born on submitters, a pattern
// malloc pays dearly for. Final, so the size operator delete gets is exact.
template <class T, class F, class Base = future_state<T>>
class future_state_with final : public Base {
  public:
    template <class G, class... BaseArgs>
    explicit future_state_with(G&& g, BaseArgs&&... base_args)
        : Base(&destroy, own_stop_source(), std::forward<BaseArgs>(base_args)...) {
        ::new (static_cast<void*>(&function_)) F(std::forward<G>(g));
    }

    // Also chosen for an over-aligned F (no aligned form is declared), so
    // the alignment is passed on here.
    static void* operator new(std::size_t size) { return recycler::allocate(size, alignof(future_state_with)); }
    static void operator delete(void* p, std::size_t size) noexcept {
        recycler::deallocate(p, size, alignof(future_state_with));
    }

    // Called only by the task, which owns the callable's lifetime.
    F& function() noexcept { return *std::launder(reinterpret_cast<F*>(&function_)); }
    void destroy_function() noexcept { function().~F(); }

  private:
    static void destroy(future_state<T>* self) noexcept { delete static_cast<future_state_with*>(self); }
    std::stop_source* own_stop_source() noexcept {
        if constexpr (takes_stop_token<F>) return &stop_source_;
        else return nullptr;
    }

    struct no_stop_source {};
    [[no_unique_address]] std::conditional_t<takes_stop_token<F>, std::stop_source, no_stop_source> stop_source_{};
    alignas(F) unsigned char function_[sizeof(F)];
};

// Calls a state's callable; a stop-token callable gets the state's own token
// through invoke_with_stop_token (detail/work_stealing/worker_context.hpp).
template <class State>
decltype(auto) invoke_state_function(State& state, const void* pool) {
    using F = std::remove_reference_t<decltype(state.function())>;
    if constexpr (takes_stop_token<F>) return invoke_with_stop_token(state.function(), pool, state.stop_source());
    else return std::invoke(state.function());
}

// What the queued halves of a future share (future_task here, periodic_task
// in schedule.hpp): a counted reference to the state, the pool whose stop
// requests (shutdown_now) reach a stop-token callable, and whether this handle
// still owns the callable. Destroyed while it owns it, the handle cancels the
// future: the task was dropped unrun. Models reporting_callable's abandon and
// is_cancelled; the derived handle adds run_and_report.
template <class State>
class state_handle {
  public:
    state_handle(State* state, const void* pool) noexcept : state_(state), pool_(pool) {}
    state_handle(state_handle&& other) noexcept
        : state_(std::exchange(other.state_, nullptr)), pool_(other.pool_), alive_(other.alive_) {}
    state_handle& operator=(state_handle&&) = delete;

    ~state_handle() {
        if (!state_) return;
        if (alive_) {
            state_->destroy_function();
            state_->cancel_unrun();
        }
        state_->release();
    }

    void abandon(std::exception_ptr why, bool report_if_unread) noexcept {
        if (!alive_) return;
        drop_function();
        state_->set_exception(std::move(why), report_if_unread);
    }

    bool is_cancelled() const noexcept { return state_ && state_->is_cancelled(); }

  protected:
    decltype(auto) invoke() { return invoke_state_function(*state_, pool_); }
    // The run ends without calling the callable (the future was cancelled).
    std::exception_ptr skip() noexcept {
        drop_function();
        return {};
    }
    // Inside a catch block: the callable threw; its exception goes to the
    // future and back to the caller (see reporting_callable for `heard`).
    std::exception_ptr fail(bool heard) noexcept {
        drop_function();
        auto error = std::current_exception();
        state_->set_exception(error, !heard);
        return error;
    }
    void drop_function() noexcept {
        if (alive_) {
            alive_ = false;
            state_->destroy_function();
        }
    }

    State* state_;
    const void* pool_;
    bool alive_ = true; // this handle owns the callable
};

// The queued half of a submit: a pointer-sized callable that models
// reporting_callable, so the pool tells it when it is rejected or dropped.
template <class T, class F, class Base = future_state<T>>
class future_task : public state_handle<future_state_with<T, F, Base>> {
    using handle = state_handle<future_state_with<T, F, Base>>;

  public:
    using state_type = future_state_with<T, F, Base>;

    // `pool` is the executor whose stop requests (shutdown_now) reach the task.
    using handle::handle;

    // Runs the callable once; returns the exception it delivered to the
    // future (see reporting_callable for `heard`).
    std::exception_ptr run_and_report(bool heard) {
        if (!this->alive_) return {};
        if (!this->state_->claim_run()) return this->skip(); // cancelled while queued
        try {
            if constexpr (std::is_void_v<T>) {
                this->invoke();
                this->drop_function();
                this->state_->set_value();
            } else {
                decltype(auto) result = this->invoke();
                this->state_->set_value(std::forward<decltype(result)>(result));
                this->drop_function();
            }
            return {};
        } catch (...) {
            return this->fail(heard);
        }
    }

    // What crew::task's constraint asks for; the pool calls run_and_report.
    void operator()() { (void)run_and_report(false); }

    // A scheduled task became ready at its due time (a task observer's `queued`).
    std::chrono::steady_clock::time_point queued_at() const noexcept
        requires requires(const Base& base) { base.due(); }
    {
        return this->state_->due();
    }
};

} // namespace crew::detail

#endif
