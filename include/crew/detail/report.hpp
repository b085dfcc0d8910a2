#ifndef CREW_DETAIL_REPORT_HPP
#define CREW_DETAIL_REPORT_HPP

// The last resort for an exception nobody else will see: a line on standard
// error naming what escaped, where, and on which thread.

#include <crew/detail/thread_name.hpp>

#include <cstdio>
#include <exception>
#include <string>

namespace crew::detail {

// Writes "crew: exception escaped <where> on thread <name>: <what()>".
// Never throws: if composing the line fails, a shorter one is written.
inline void report_escaped_exception(const std::exception_ptr& error, const char* where) noexcept {
    try {
        std::string what = "unknown exception";
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        std::fprintf(stderr, "crew: exception escaped %s on thread %s: %s\n", where,
                     current_thread_name().c_str(), what.c_str());
    } catch (...) {
        std::fputs("crew: exception escaped a task (and reporting it failed)\n", stderr);
    }
}

} // namespace crew::detail

#endif
