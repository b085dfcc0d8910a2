# Compile-fail check, run by ctest in script mode:
#
#   cmake -DTARGET=cf_<stem> -DBINARY_DIR=<build tree> -DSOURCE=<file.cpp>
#         [-DCONFIG=<config>] -P check.cmake
#
# Builds TARGET and passes only if the build FAILS, every regex given in
# SOURCE on a line `// expect: <regex>` occurs in the combined build output,
# and no regex given on a line `// expect-not: <regex>` does (say, an error
# that a static_assert is meant to replace).
# (CTest's PASS_REGULAR_EXPRESSION would pass when any ONE regex matched.)
# Regexes use CMake syntax (no \d, no lazy quantifiers); the compiler runs
# under LC_ALL=C so that g++ quotes with ASCII ' rather than UTF-8 quotes.
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS TARGET BINARY_DIR SOURCE)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "check.cmake: -D${var}=... is required")
    endif()
endforeach()

# Collect the expectations. Lines are cut with string(FIND) rather than turned
# into a CMake list, because regexes may hold ';', '[' or '\' which lists mangle.
file(READ "${SOURCE}" text)
set(n_expect 0)
set(n_reject 0)
while(NOT text STREQUAL "")
    string(FIND "${text}" "\n" nl)
    if(nl EQUAL -1)
        set(line "${text}")
        set(text "")
    else()
        string(SUBSTRING "${text}" 0 ${nl} line)
        math(EXPR nl "${nl} + 1")
        string(SUBSTRING "${text}" ${nl} -1 text)
    endif()
    # `expect:` goes to expect_<i>, `expect-not:` to reject_<i>.
    if(line MATCHES "^[ \t]*//[ \t]*expect(-not)?:[ \t]*(.*)$")
        if("${CMAKE_MATCH_1}" STREQUAL "")
            set(kind expect)
        else()
            set(kind reject)
        endif()
        string(STRIP "${CMAKE_MATCH_2}" re)
        if(NOT re STREQUAL "")
            set(${kind}_${n_${kind}} "${re}")
            math(EXPR n_${kind} "${n_${kind}} + 1")
        endif()
    endif()
endwhile()
if(n_expect EQUAL 0)
    # Without an expectation any failure (even a typo) would count as a pass.
    message(FATAL_ERROR "${SOURCE}: no `// expect: <regex>` line; add at least one")
endif()

set(config_args "")
if(CONFIG)
    set(config_args --config "${CONFIG}")
endif()
set(ENV{LC_ALL} C)
execute_process(
    COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" --target "${TARGET}" ${config_args}
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)   # same variable: stdout and stderr combined

if(result EQUAL 0)
    message("${output}")
    message(FATAL_ERROR "${SOURCE}: compiled successfully, but it must not compile")
endif()

set(missing "")
math(EXPR last "${n_expect} - 1")
foreach(i RANGE ${last})
    string(REGEX MATCH "${expect_${i}}" found "${output}")
    if(found STREQUAL "")
        string(APPEND missing "\n  ${expect_${i}}")
    else()
        message(STATUS "found: ${expect_${i}}")
    endif()
endforeach()

if(NOT missing STREQUAL "")
    message("${output}")
    message(FATAL_ERROR "${SOURCE}: failed to compile as expected, but these "
                        "`// expect:` regexes were not found in the output:${missing}")
endif()

set(unwanted "")
if(n_reject GREATER 0)
    math(EXPR last "${n_reject} - 1")
    foreach(i RANGE ${last})
        string(REGEX MATCH "${reject_${i}}" found "${output}")
        if(NOT found STREQUAL "")
            string(APPEND unwanted "\n  ${reject_${i}}")
        endif()
    endforeach()
endif()
if(NOT unwanted STREQUAL "")
    message("${output}")
    message(FATAL_ERROR "${SOURCE}: failed to compile, but with diagnostics it must not give; these "
                        "`// expect-not:` regexes were found in the output:${unwanted}")
endif()
message(STATUS "${SOURCE}: fails to compile with all ${n_expect} expected diagnostic(s)")
