// Catch2 v2's main(), compiled once for the unit tests built by b2
// (test/Jamfile). The CMake build links Catch2::Catch2WithMain instead.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
