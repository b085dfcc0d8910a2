#ifndef CREW_POLICIES_THREAD_FACTORY_HPP
#define CREW_POLICIES_THREAD_FACTORY_HPP

/// \file
/// `crew::default_thread_factory`, the ThreadFactoryPolicy default.
///
/// A thread factory is any movable type with
/// `std::thread new_thread(crew::task body)`: it must start a thread that runs
/// `body` once. It may throw to refuse; the pool then rolls back cleanly (no
/// worker counted, the task neither lost nor run twice). `new_thread` may be
/// called from several threads at once.

#include <crew/detail/thread_name.hpp>
#include <crew/task.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>

namespace crew {

/// Names threads `<prefix>-<pool>-<thread>` (prefix `"crew"`), cut to the
/// 15 characters Linux keeps. Pools are numbered from 1 in order of factory
/// construction, threads from 1 per factory; copies share neither counter
/// with later factories but keep their pool number. Java: `DefaultThreadFactory`.
class default_thread_factory {
  public:
    /// A factory for a new pool number, naming threads `crew-<pool>-<n>`.
    default_thread_factory() : default_thread_factory("crew") {}

    /// A factory for a new pool number, naming threads `<prefix>-<pool>-<n>`.
    explicit default_thread_factory(std::string prefix)
        : prefix_(std::move(prefix)), pool_number_(next_pool_number()) {}

    default_thread_factory(const default_thread_factory& other)
        : prefix_(other.prefix_), pool_number_(other.pool_number_),
          threads_(other.threads_.load(std::memory_order_relaxed)) {}
    default_thread_factory& operator=(const default_thread_factory&) = delete;

    /// Starts a thread named after this factory that runs `body`.
    /// Throws `std::system_error` if the system cannot start a thread.
    std::thread new_thread(task body) {
        const auto n = threads_.fetch_add(1, std::memory_order_relaxed) + 1;
        std::string name = prefix_ + '-' + std::to_string(pool_number_) + '-' + std::to_string(n);
        if (name.size() > detail::max_thread_name) name.resize(detail::max_thread_name);
        return std::thread([name = std::move(name), body = std::move(body)]() mutable {
            detail::set_current_thread_name(name);
            body();
        });
    }

    /// This factory's pool number (counted from 1).
    std::uint64_t pool_number() const noexcept { return pool_number_; }

  private:
    static std::uint64_t next_pool_number() noexcept {
        static std::atomic<std::uint64_t> pools{0};
        return pools.fetch_add(1, std::memory_order_relaxed) + 1;
    }

    std::string prefix_;
    std::uint64_t pool_number_;
    std::atomic<std::uint64_t> threads_{0};
};

} // namespace crew

#endif
