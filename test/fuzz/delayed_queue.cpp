// libFuzzer target: crew::delayed_queue against a sorted reference model,
// then its heap, crew::detail::delay_heap, alone against the same model.
//
// Each input is a sequence of operations: schedule (with or without a slot,
// periodic or not, at a due time from a small menu that includes
// time_point::min(), the epoch, max(), ties and times well in the past or
// well in the future), requeue, remove(slot), poll, poll_until and take that
// cannot block, drain, remove_if(cancelled), on_shutdown under each policy,
// and close. After every step the queue must agree with the model: the task
// taken is the model's earliest (FIFO among equal due times), sizes, the
// head's due time and every slot match. Tasks name themselves when run, so
// each one handed back is identified. The same input then drives the heap
// alone (insert, pop_head, remove, extract_if, drain), where nothing but the
// heap can be at fault.
//
// Build and run: test/fuzz/run.sh (see doc/reliability.md).
#include <crew/detail/queue/delay_heap.hpp>
#include <crew/policies/delayed_queue.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include "check.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <tuple>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using time_point = clock_type::time_point;
using crew::schedule_slot;

constexpr int slot_count = 8;
constexpr int max_ops = 400;

using crew_fuzz::fail;

// Run: records its id. Also answers is_cancelled() from the harness's flags,
// like a future's task.
struct probe {
    int id;
    std::vector<int>* ran;
    const std::vector<char>* cancelled;

    std::exception_ptr run_and_report(bool) {
        ran->push_back(id);
        return {};
    }
    void abandon(std::exception_ptr, bool) noexcept {}
    bool is_cancelled() const noexcept { return (*cancelled)[static_cast<std::size_t>(id)] != 0; }
    void operator()() { (void)run_and_report(false); }
};

struct entry {
    int id;
    time_point due; // as the queue keeps it: exactly, before the clock's epoch too
    std::uint64_t sequence;
    bool periodic;
    int slot; // -1: none
};

bool earlier(const entry& a, const entry& b) { return std::tie(a.due, a.sequence) < std::tie(b.due, b.sequence); }

// What the two harnesses share: the input, the reference model (entries,
// the slots and which id owns each, the ids run and cancelled) and the run
// loop. `Harness` picks and performs one operation in step(), and has
// drain() and check_agreement().
template <class Harness>
class model_harness {
  public:
    explicit model_harness(FuzzedDataProvider& in) : in_(in), base_(clock_type::now()) {
        cancelled_.reserve(max_ops + 1);
        slot_owner_.fill(-1);
    }

    void run() {
        auto& self = static_cast<Harness&>(*this);
        for (int step = 0; step < max_ops && in_.remaining_bytes() > 0; ++step) {
            self.step();
            self.check_agreement();
        }
        self.drain();
        self.check_agreement();
    }

  protected:
    crew::task make_task(int id) { return crew::task(probe{id, &ran_, &cancelled_}); }

    void forget(int id) {
        const auto it = std::find_if(model_.begin(), model_.end(), [id](const entry& e) { return e.id == id; });
        CHECK(it != model_.end(), id);
        if (it->slot >= 0) slot_owner_[static_cast<std::size_t>(it->slot)] = -1;
        model_.erase(it);
    }

    // Each slot is queued exactly when the model has an entry that owns it.
    void check_slots() {
        for (int s = 0; s < slot_count; ++s) {
            const bool queued = slots_[static_cast<std::size_t>(s)].node != schedule_slot::not_queued;
            CHECK(queued == (slot_owner_[static_cast<std::size_t>(s)] >= 0), s);
        }
    }

    FuzzedDataProvider& in_;
    const time_point base_;
    std::array<schedule_slot, slot_count> slots_{};
    std::array<int, slot_count> slot_owner_{};
    std::vector<entry> model_;
    std::vector<int> ran_;
    std::vector<char> cancelled_;
    std::uint64_t sequence_ = 0;
};

class harness : public model_harness<harness> {
  public:
    using model_harness::model_harness;

  private:
    friend class model_harness<harness>;

    void step() {
        switch (in_.ConsumeIntegralInRange<int>(0, 11)) {
        case 0:
        case 1: schedule(); break;
        case 2: requeue(); break;
        case 3: remove(); break;
        case 4:
        case 5: poll(); break;
        case 6: non_blocking_wait(); break;
        case 7: cancel(); break;
        case 8: remove_cancelled(); break;
        case 9: on_shutdown(); break;
        case 10: drain(); break;
        case 11: q_.close(), closed_ = true; break;
        }
    }

    time_point pick_due() {
        switch (in_.ConsumeIntegralInRange<int>(0, 6)) {
        case 0: return time_point::min();
        case 1: return time_point{};
        case 2: return time_point::max();
        case 3:
            if (!model_.empty()) return model_[in_.ConsumeIntegralInRange<std::size_t>(0, model_.size() - 1)].due;
            [[fallthrough]];
        case 4: return base_ - std::chrono::microseconds(in_.ConsumeIntegral<std::uint16_t>()); // due
        case 5: return base_ - std::chrono::microseconds(in_.ConsumeIntegralInRange<int>(0, 3)); // ties likely
        default: return base_ + std::chrono::hours(1) + std::chrono::microseconds(in_.ConsumeIntegral<std::uint16_t>());
        }
    }


    int new_id() {
        cancelled_.push_back(0);
        return static_cast<int>(cancelled_.size()) - 1;
    }

    int free_slot() {
        const int s = in_.ConsumeIntegralInRange<int>(0, slot_count - 1);
        return slot_owner_[static_cast<std::size_t>(s)] < 0 ? s : -1;
    }

    void inserted(int id, time_point due, bool periodic, int slot) {
        model_.push_back({id, due, sequence_++, periodic, slot});
        if (slot >= 0) slot_owner_[static_cast<std::size_t>(slot)] = id;
    }

    void schedule() {
        const int id = new_id();
        const time_point due = pick_due();
        const bool periodic = in_.ConsumeBool();
        const int slot = in_.ConsumeBool() ? free_slot() : -1;
        crew::task t = make_task(id);
        const bool queued = q_.schedule(std::move(t), due, slot >= 0 ? &slots_[static_cast<std::size_t>(slot)] : nullptr,
                                        periodic);
        CHECK(queued == !closed_);
        CHECK(static_cast<bool>(t) == !queued); // refused: the task stays with the caller
        if (queued) inserted(id, due, periodic, slot);
    }

    // A periodic task's next run: accepted even after close, but not once
    // drained after close (shutdown_now handed the queue back).
    void requeue() {
        const int slot = free_slot();
        if (slot < 0) return;
        const int id = new_id();
        const time_point due = pick_due();
        crew::task t = make_task(id);
        const bool queued = q_.requeue(std::move(t), due, slots_[static_cast<std::size_t>(slot)]);
        CHECK(queued == !drained_after_close_);
        CHECK(static_cast<bool>(t) == !queued); // refused: the task stays with the caller
        if (queued) inserted(id, due, true, slot);
    }

    // Removes `id` from the model; the queue handed back `t`, which must be it.
    void expect_handed_back(crew::task& t, int id) {
        CHECK(static_cast<bool>(t));
        ran_.clear();
        t();
        CHECK(ran_.size() == 1 && ran_[0] == id, id, ran_.empty() ? -1 : ran_[0]);
        forget(id);
    }

    void remove() {
        const int slot = in_.ConsumeIntegralInRange<int>(0, slot_count - 1);
        crew::task t = q_.remove(slots_[static_cast<std::size_t>(slot)]);
        const int owner = slot_owner_[static_cast<std::size_t>(slot)];
        if (owner < 0) {
            CHECK(!t, slot);
            return;
        }
        expect_handed_back(t, owner);
    }

    // The id the queue must hand out now, if any: the earliest, if due.
    std::optional<int> due_head() const {
        if (model_.empty()) return std::nullopt;
        const entry& head = *std::min_element(model_.begin(), model_.end(), earlier);
        if (head.due > clock_type::now()) return std::nullopt;
        return head.id;
    }

    void poll() {
        const auto expected = due_head();
        crew::task t;
        const bool got = q_.poll(t);
        CHECK(got == expected.has_value(), got, expected.value_or(-1));
        if (got) expect_handed_back(t, *expected);
    }

    // take / poll_until that cannot block: a past deadline, or an interrupt
    // flag already set (a due task still wins over both).
    void non_blocking_wait() {
        const auto expected = due_head();
        crew::interrupt_flag flag{false};
        crew::task t;
        crew::wait_status status;
        switch (in_.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            status = q_.poll_until(t, time_point::min(), flag);
            CHECK(status == (expected ? crew::wait_status::taken : crew::wait_status::timed_out));
            break;
        case 1:
            status = q_.poll_until(t, clock_type::now() - std::chrono::seconds(1), flag);
            CHECK(status == (expected ? crew::wait_status::taken : crew::wait_status::timed_out));
            break;
        case 2:
            flag = true;
            status = q_.poll_until(t, time_point::max(), flag);
            CHECK(status == (expected ? crew::wait_status::taken : crew::wait_status::interrupted));
            break;
        default:
            flag = true;
            status = q_.take(t, flag);
            CHECK(status == (expected ? crew::wait_status::taken : crew::wait_status::interrupted));
            break;
        }
        if (expected) expect_handed_back(t, *expected);
        const auto stats = q_.wait_statistics();
        CHECK(stats.waiting == 0 && !stats.has_leader);
    }

    void cancel() {
        if (model_.empty()) return;
        const entry& e = model_[in_.ConsumeIntegralInRange<std::size_t>(0, model_.size() - 1)];
        cancelled_[static_cast<std::size_t>(e.id)] = 1;
    }

    // Runs the tasks the queue handed back and checks they are exactly `ids`.
    void expect_set(std::vector<crew::task>& tasks, std::vector<int> ids) {
        ran_.clear();
        for (auto& t : tasks) {
            CHECK(static_cast<bool>(t));
            t();
        }
        std::vector<int> got = ran_;
        std::sort(got.begin(), got.end());
        std::sort(ids.begin(), ids.end());
        CHECK(got == ids, static_cast<long long>(got.size()), static_cast<long long>(ids.size()));
        for (int id : ids) forget(id);
    }

    void remove_cancelled() {
        std::vector<int> ids;
        for (const entry& e : model_)
            if (cancelled_[static_cast<std::size_t>(e.id)]) ids.push_back(e.id);
        const std::size_t removed = q_.remove_if([](const crew::task& t) { return t.is_cancelled(); });
        CHECK(removed == ids.size(), static_cast<long long>(removed), static_cast<long long>(ids.size()));
        for (int id : ids) forget(id);
    }

    void on_shutdown() {
        const bool keep_periodic = in_.ConsumeBool();
        const bool keep_delayed = in_.ConsumeBool();
        q_.set_continue_periodic_after_shutdown(keep_periodic);
        q_.set_execute_delayed_after_shutdown(keep_delayed);
        const auto now = clock_type::now();
        std::vector<int> ids;
        for (const entry& e : model_) {
            const bool drop = cancelled_[static_cast<std::size_t>(e.id)] ||
                              (e.periodic ? !keep_periodic : !keep_delayed && e.due > now);
            if (drop) ids.push_back(e.id);
        }
        std::vector<crew::task> dropped = q_.on_shutdown();
        expect_set(dropped, ids);
    }

    void drain() {
        std::vector<entry> order = model_;
        std::sort(order.begin(), order.end(), earlier);
        std::vector<crew::task> tasks = q_.drain();
        if (closed_) drained_after_close_ = true;
        CHECK(tasks.size() == order.size());
        ran_.clear();
        for (auto& t : tasks) t();
        for (std::size_t i = 0; i < order.size(); ++i) CHECK(ran_[i] == order[i].id, ran_[i], order[i].id); // due order
        for (const entry& e : order) forget(e.id);
    }

    void check_agreement() {
        CHECK(q_.size() == model_.size(), static_cast<long long>(q_.size()), static_cast<long long>(model_.size()));
        const time_point head =
            model_.empty() ? time_point::max() : std::min_element(model_.begin(), model_.end(), earlier)->due;
        CHECK(q_.next_due() == head);
        check_slots();
    }

    crew::delayed_queue q_;
    bool closed_ = false;
    bool drained_after_close_ = false;
};

// detail::delay_heap alone, under the same menu of due times and slots.
class heap_harness : public model_harness<heap_harness> {
  public:
    explicit heap_harness(FuzzedDataProvider& in) : model_harness(in) { heap_.reserve(max_ops + 1); }

  private:
    friend class model_harness<heap_harness>;

    void step() {
        switch (in_.ConsumeIntegralInRange<int>(0, 5)) {
        case 0:
        case 1: insert(); break;
        case 2: pop(); break;
        case 3: remove(); break;
        case 4: extract_periodic(); break;
        case 5: drain(); break;
        }
    }

    time_point pick_due() {
        switch (in_.ConsumeIntegralInRange<int>(0, 4)) {
        case 0: return time_point::min();
        case 1: return time_point::max();
        case 2:
            if (!model_.empty()) return model_[in_.ConsumeIntegralInRange<std::size_t>(0, model_.size() - 1)].due;
            [[fallthrough]];
        case 3: return base_ - std::chrono::microseconds(in_.ConsumeIntegralInRange<int>(0, 3)); // ties likely
        default: return base_ + std::chrono::microseconds(in_.ConsumeIntegral<std::uint16_t>());
        }
    }

    void insert() {
        const int id = static_cast<int>(cancelled_.size());
        cancelled_.push_back(0);
        const time_point due = pick_due();
        const bool periodic = in_.ConsumeBool();
        int slot = in_.ConsumeIntegralInRange<int>(-1, slot_count - 1);
        if (slot >= 0 && slot_owner_[static_cast<std::size_t>(slot)] >= 0) slot = -1;
        heap_.insert({make_task(id), due, sequence_, 0, slot >= 0 ? &slots_[static_cast<std::size_t>(slot)] : nullptr,
                      periodic});
        model_.push_back({id, due, sequence_++, periodic, slot});
        if (slot >= 0) slot_owner_[static_cast<std::size_t>(slot)] = id;
    }

    int run_one(crew::task& t) {
        CHECK(static_cast<bool>(t));
        ran_.clear();
        t();
        CHECK(ran_.size() == 1);
        return ran_[0];
    }

    void pop() {
        if (model_.empty()) return;
        const int expected = std::min_element(model_.begin(), model_.end(), earlier)->id;
        crew::task t = heap_.pop_head();
        const int got = run_one(t);
        CHECK(got == expected, got, expected);
        forget(got);
    }

    void remove() {
        const int slot = in_.ConsumeIntegralInRange<int>(0, slot_count - 1);
        crew::task t = heap_.remove(slots_[static_cast<std::size_t>(slot)]);
        const int owner = slot_owner_[static_cast<std::size_t>(slot)];
        if (owner < 0) {
            CHECK(!t, slot);
            return;
        }
        const int got = run_one(t);
        CHECK(got == owner, got, owner);
        forget(got);
    }

    void extract_periodic() {
        std::vector<crew::task> out;
        out.reserve(heap_.size());
        heap_.extract_if([](time_point, const crew::detail::delay_heap::node& n) { return n.periodic; }, out);
        std::vector<int> expected;
        for (const entry& e : model_)
            if (e.periodic) expected.push_back(e.id);
        CHECK(out.size() == expected.size(), static_cast<long long>(out.size()),
              static_cast<long long>(expected.size()));
        std::vector<int> got;
        for (auto& t : out) got.push_back(run_one(t));
        std::sort(got.begin(), got.end());
        CHECK(got == expected);
        for (int id : got) forget(id);
    }

    void drain() {
        std::vector<entry> order = model_;
        std::sort(order.begin(), order.end(), earlier);
        std::size_t i = 0;
        heap_.drain([&](time_point due, crew::task&& t) {
            CHECK(i < order.size());
            CHECK(due == order[i].due);
            crew::task mine = std::move(t);
            const int got = run_one(mine);
            CHECK(got == order[i].id, got, order[i].id); // due order, FIFO among equal due times
            ++i;
        });
        CHECK(i == order.size());
        for (const entry& e : order) forget(e.id);
    }

    void check_agreement() {
        CHECK(heap_.size() == model_.size(), static_cast<long long>(heap_.size()),
              static_cast<long long>(model_.size()));
        CHECK(heap_.key_count() >= heap_.size());
        CHECK(heap_.empty() == model_.empty());
        if (!model_.empty()) CHECK(heap_.head_due() == std::min_element(model_.begin(), model_.end(), earlier)->due);
        check_slots();
    }

    crew::detail::delay_heap heap_;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    {
        FuzzedDataProvider in(data, size);
        harness(in).run();
    }
    FuzzedDataProvider in(data, size);
    heap_harness(in).run();
    return 0;
}
