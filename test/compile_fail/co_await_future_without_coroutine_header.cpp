// co_await on a crew::future in a coroutine of the user's own, without
// <crew/coroutine.hpp> (which defines the awaiting): one sentence naming the
// header, instead of "no member named 'await_ready' in crew::future<int>".
// expect: co_await on a crew::future needs #include <crew/coroutine\.hpp>
// expect-not: await_ready
#include <crew/fixed_pool.hpp>

#include <coroutine>
#include <exception>

struct detached {
    struct promise_type {
        detached get_return_object() { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() {}
        void unhandled_exception() { std::terminate(); }
    };
};

detached add_one(crew::fixed_pool& pool) {
    int v = co_await pool.submit([] { return 41; });
    (void)(v + 1);
}

int main() {
    crew::fixed_pool pool(1);
    add_one(pool);
}
