# What crew's stand-alone test projects (test/fuzz, test/soak) share: C++20
# without extensions, RelWithDebInfo unless a build type is given, threads,
# and crew's headers straight from the source tree (no install, no
# add_subdirectory: each project builds only its own programs).
#
#   include(${CMAKE_CURRENT_SOURCE_DIR}/../common/standalone.cmake)
#   crew_standalone_executable(<target> <source> [compile options...])

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
if(NOT CMAKE_BUILD_TYPE)
    set(CMAKE_BUILD_TYPE RelWithDebInfo)
endif()
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)

set(crew_standalone_include "${CMAKE_CURRENT_LIST_DIR}/../../include")

function(crew_standalone_executable target source)
    add_executable(${target} ${source})
    target_include_directories(${target} PRIVATE "${crew_standalone_include}")
    target_compile_options(${target} PRIVATE ${ARGN})
    target_link_libraries(${target} PRIVATE Threads::Threads)
endfunction()
