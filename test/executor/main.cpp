// The executor behaviour suite (Boost.Test). Every test case carries a
// timeout decorator, so a deadlock fails one case instead of hanging CI.
#define BOOST_TEST_MODULE crew_executor
#include <boost/test/unit_test.hpp>
