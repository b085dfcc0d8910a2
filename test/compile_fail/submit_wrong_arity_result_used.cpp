// submit() of a callable that needs arguments, whose result the caller goes
// on to use as a future of a value: the static_assert is the one error (the
// refused call returns something every such use accepts), not "void value
// not ignored" before it.
// expect: submit\(\) needs a callable as f\(\) or f\(std::stop_token\)
// expect-not: void value not ignored
// expect-not: conversion from
#include <crew/any_executor.hpp>
#include <crew/fixed_pool.hpp>

#include <vector>

int main() {
    crew::fixed_pool pool(1);
    crew::any_executor handle = pool;
    int v = pool.submit([](int x) { return x; }).get();
    crew::future<int> f = handle.submit([](int x) { return x; });
    if (f.is_done()) v += f.get();
    auto maybe = pool.try_submit([](int x) { return x; });
    if (maybe) v += maybe->get();
    std::vector<crew::future<int>> all;
    all.push_back(pool.submit([](int x) { return x; }));
    return v;
}
