#ifndef CREW_DETAIL_THREAD_NAME_HPP
#define CREW_DETAIL_THREAD_NAME_HPP

#include <cstddef>
#include <string>

#if defined(__linux__) || defined(__APPLE__) || defined(__FreeBSD__)
#include <pthread.h>
#endif

namespace crew::detail {

// Linux keeps 15 characters of a thread name (16 with the terminator).
inline constexpr std::size_t max_thread_name = 15;

inline void set_current_thread_name(const std::string& name) noexcept {
#if defined(__linux__)
    pthread_setname_np(pthread_self(), name.c_str());
#elif defined(__APPLE__)
    pthread_setname_np(name.c_str());
#elif defined(__FreeBSD__)
    pthread_set_name_np(pthread_self(), name.c_str());
#else
    (void)name;
#endif
}

inline std::string current_thread_name() {
#if defined(__linux__) || defined(__APPLE__)
    char buffer[64] = {};
    if (pthread_getname_np(pthread_self(), buffer, sizeof buffer) == 0 && buffer[0] != '\0') return buffer;
#endif
    return "unnamed thread";
}

} // namespace crew::detail

#endif
