// escaped_message, shared by the executor and Asio suites: what reached a
// pool's after_execute hook. Included relatively, as stderr_capture.hpp is.
#ifndef CREW_TEST_COMMON_ESCAPED_MESSAGE_HPP
#define CREW_TEST_COMMON_ESCAPED_MESSAGE_HPP

#include <atomic>
#include <exception>
#include <future>
#include <string>

namespace crew_test_common {

// The what() of the first exception that a pool's after_execute receives,
// for the test to wait for. Declare it before the pool: the hook uses it.
class escaped_message {
  public:
    // For pool_options::after_execute.
    auto hook() {
        return [this](std::exception_ptr e) {
            if (!e || seen_.exchange(true)) return;
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& x) {
                message_.set_value(x.what());
            } catch (...) {
                message_.set_value("(not a std::exception)");
            }
        };
    }
    std::future<std::string>& future() { return future_; }

  private:
    std::promise<std::string> message_;
    std::future<std::string> future_ = message_.get_future();
    std::atomic<bool> seen_{false};
};

} // namespace crew_test_common

#endif
