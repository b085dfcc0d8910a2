// The Boost.Asio interop suite (Boost.Test): a crew pool's executor under
// real Asio, <crew/asio.hpp>. Every test case carries a timeout decorator,
// so a deadlock fails one case instead of hanging CI; the waits inside the
// cases are futures with deadlines scaled by CREW_TEST_TIME_FACTOR.
#define BOOST_TEST_MODULE crew_asio
#include <boost/test/unit_test.hpp>
