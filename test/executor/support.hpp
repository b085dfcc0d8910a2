// Shared helpers for the executor suite.
#ifndef CREW_TEST_EXECUTOR_SUPPORT_HPP
#define CREW_TEST_EXECUTOR_SUPPORT_HPP

#include <crew/crew.hpp>

#include "../common/time_factor.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <string>
#include <thread>

#include <unistd.h>

namespace crew_test {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// One reading of CREW_TEST_TIME_FACTOR for both suites; the names stay
// usable here, unqualified or as crew_test::, at every call site.
using crew_test_common::eventually;
using crew_test_common::scaled;
using crew_test_common::time_factor;

// Tasks block on a gate until the test opens it.
class gate {
  public:
    void open() { latch_.count_down(); }
    void wait() { latch_.wait(); }

  private:
    std::latch latch_{1};
};

// Counts the tasks that ran, and lets the test wait for a number of them
// with a deadline, so that a lost task fails the test instead of hanging it.
class run_counter {
  public:
    void hit() {
        ran_.fetch_add(1);
        ran_.notify_all();
    }
    int count() const { return ran_.load(); }
    bool wait_for_count(int expected, std::chrono::milliseconds limit = 10s) const {
        return eventually([&] { return ran_.load() >= expected; }, limit);
    }

  private:
    std::atomic<int> ran_{0};
};

inline bool message_contains(const std::exception& e, const std::string& needle) {
    return std::string(e.what()).find(needle) != std::string::npos;
}

// Redirects file descriptor 2 into a temporary file while alive, so that the
// reports of escaped exceptions can be read (and do not flood the log).
class stderr_capture {
  public:
    stderr_capture() : file_(std::tmpfile()), saved_(::dup(2)) {
        std::fflush(stderr);
        ::dup2(::fileno(file_), 2);
    }
    stderr_capture(const stderr_capture&) = delete;
    stderr_capture& operator=(const stderr_capture&) = delete;
    ~stderr_capture() {
        restore();
        std::fclose(file_);
    }
    // Ends the capture and returns what was written.
    std::string text() {
        restore();
        std::string out;
        std::rewind(file_);
        for (int c; (c = std::fgetc(file_)) != EOF;) out.push_back(static_cast<char>(c));
        return out;
    }

  private:
    void restore() {
        if (saved_ < 0) return;
        std::fflush(stderr);
        ::dup2(saved_, 2);
        ::close(saved_);
        saved_ = -1;
    }
    std::FILE* file_;
    int saved_;
};

} // namespace crew_test

#endif
