// stderr_capture, shared by the executor and Asio suites. Included
// relatively ("../common/stderr_capture.hpp"), as time_factor.hpp is.
#ifndef CREW_TEST_COMMON_STDERR_CAPTURE_HPP
#define CREW_TEST_COMMON_STDERR_CAPTURE_HPP

#include <cstdio>
#include <string>

#include <unistd.h>

namespace crew_test_common {

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

} // namespace crew_test_common

#endif
