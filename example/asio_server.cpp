// An Asio TCP server whose CPU-heavy work runs on a crew pool (issue #17).
//
// The io_context does the networking: one thread accepts, reads and writes.
// Each connection's handlers run on a crew::fixed_pool through a strand of
// its own (bind_executor), so one connection's requests are handled one at a
// time, in order, while different connections use the workers side by side.
// A request is a number n on a line; the reply is the sum of the primes
// below n, found by trial division: the CPU-heavy part, on the pool, never
// on the I/O thread. A second strand over the same pool keeps server-wide
// statistics in plain (non-atomic) fields.
//
// Four clients on threads of their own send their numbers over 127.0.0.1
// (the server listens on a port the system picks) and check every reply
// against a sieve of Eratosthenes. Exits 0 when every reply and every count
// is right, 1 otherwise.
#include <crew/asio.hpp>
#include <crew/fixed_pool.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <istream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using pool_strand = asio::strand<crew::fixed_pool::executor_type>;

// The work: the sum of the primes below n, by trial division.
std::uint64_t sum_of_primes_below(std::uint64_t n) {
    std::uint64_t sum = 0;
    for (std::uint64_t k = 2; k < n; ++k) {
        bool prime = true;
        for (std::uint64_t d = 2; d * d <= k; ++d)
            if (k % d == 0) {
                prime = false;
                break;
            }
        if (prime) sum += k;
    }
    return sum;
}

// What the clients check against: the same sums by a different method.
std::uint64_t sieve_sum_below(std::uint64_t n) {
    std::vector<bool> composite(n, false);
    std::uint64_t sum = 0;
    for (std::uint64_t k = 2; k < n; ++k) {
        if (composite[k]) continue;
        sum += k;
        for (std::uint64_t m = k * k; m < n; m += k) composite[m] = true;
    }
    return sum;
}

// Server-wide counts. Plain fields: only handlers on the statistics strand
// touch them, and a strand runs one handler at a time.
struct statistics {
    int requests = 0;
    std::uint64_t total = 0;
    int expected = 0;
    std::promise<void> all_counted; // set when `requests` reaches `expected`
};

// Handlers that ran anywhere but on one of the pool's workers, inside their
// connection's strand. Must stay 0.
std::atomic<int> misplaced{0};

// Connections not yet closed, counted from the number of clients (set by
// main before any connects), so that a first session closing before the
// next one opens does not read as "all closed"; the last one to close sets
// `all_closed`.
std::atomic<int> open_sessions{0};
std::promise<void> all_closed;

// One connection. Its socket belongs to the io_context; its completion
// handlers are bound to `strand_`, a strand over the pool, so they run on
// the pool one at a time. The socket is only ever used by the one chain
// read -> work -> write -> read, so no two threads touch it at once.
class session : public std::enable_shared_from_this<session> {
  public:
    session(tcp::socket socket, pool_strand strand, pool_strand stats_strand, statistics& stats)
        : socket_(std::move(socket)), strand_(std::move(strand)), stats_strand_(std::move(stats_strand)),
          stats_(stats) {}
    session(const session&) = delete;
    session& operator=(const session&) = delete;
    ~session() { // when the last handler lets go: on a pool worker
        if (open_sessions.fetch_sub(1) == 1) all_closed.set_value();
    }

    void read() {
        asio::async_read_until(socket_, input_, '\n',
                               asio::bind_executor(strand_, [self = shared_from_this()](error_code ec, std::size_t) {
                                   self->on_request(ec);
                               }));
    }

  private:
    void on_request(error_code ec) {
        if (!strand_.running_in_this_thread() || !strand_.get_inner_executor().running_in_this_thread())
            misplaced.fetch_add(1);
        if (ec) return; // end of file: the client is done, and the last handler drops the session
        std::istream line(&input_);
        std::uint64_t n = 0;
        line >> n;
        line.ignore(1); // the '\n'

        const std::uint64_t sum = sum_of_primes_below(n); // CPU-heavy, on a pool worker

        asio::post(stats_strand_, [&stats = stats_, sum] {
            stats.total += sum;
            if (++stats.requests == stats.expected) stats.all_counted.set_value();
        });
        reply_ = std::to_string(n) + " " + std::to_string(sum) + "\n";
        asio::async_write(socket_, asio::buffer(reply_),
                          asio::bind_executor(strand_, [self = shared_from_this()](error_code ec, std::size_t) {
                              if (!ec) self->read();
                          }));
    }

    tcp::socket socket_;
    pool_strand strand_;
    pool_strand stats_strand_;
    statistics& stats_;
    asio::streambuf input_;
    std::string reply_;
};

// Accepts `remaining` connections, then stops listening.
void accept(tcp::acceptor& acceptor, int remaining, crew::fixed_pool& pool, const pool_strand& stats_strand,
            statistics& stats) {
    if (remaining == 0) return;
    acceptor.async_accept([&acceptor, remaining, &pool, stats_strand, &stats](error_code ec, tcp::socket socket) {
        if (ec) return;
        std::make_shared<session>(std::move(socket), asio::make_strand(pool.get_executor()), stats_strand, stats)
            ->read();
        accept(acceptor, remaining - 1, pool, stats_strand, stats);
    });
}

struct reply {
    std::uint64_t n;
    std::uint64_t sum;
};

// A blocking client on a thread of its own: sends each number, reads each reply.
std::vector<reply> client(tcp::endpoint server, std::vector<std::uint64_t> numbers) {
    asio::io_context io;
    tcp::socket socket(io);
    socket.connect(server);
    asio::streambuf input;
    std::vector<reply> replies;
    for (std::uint64_t n : numbers) {
        const std::string request = std::to_string(n) + "\n";
        asio::write(socket, asio::buffer(request));
        asio::read_until(socket, input, '\n');
        std::istream line(&input);
        reply r{};
        line >> r.n >> r.sum;
        line.ignore(1);
        replies.push_back(r);
    }
    socket.shutdown(tcp::socket::shutdown_both);
    return replies;
}

int main() {
    constexpr int clients = 4;
    const std::vector<std::vector<std::uint64_t>> requests = {
        {10, 100, 1000},
        {20000, 50000, 10},
        {100000, 1000, 75000},
        {30000, 2, 150000},
    };
    int expected_requests = 0;
    for (const auto& r : requests) expected_requests += static_cast<int>(r.size());

    // Order matters: the io_context outlives the pool, whose last handlers
    // close sockets; `stats` outlives the pool, whose handlers update it.
    asio::io_context io;
    statistics stats;
    stats.expected = expected_requests;
    crew::fixed_pool pool(2);
    const pool_strand stats_strand = asio::make_strand(pool.get_executor());

    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    const tcp::endpoint server = acceptor.local_endpoint();
    std::printf("server listening on %s:%u, handlers on a crew::fixed_pool of 2 through strands\n",
                server.address().to_string().c_str(), static_cast<unsigned>(server.port()));
    open_sessions.store(clients);
    accept(acceptor, clients, pool, stats_strand, stats);
    // Between a completion handed to the pool and the operation its handler
    // starts next, the io_context has nothing of its own to wait for: only
    // its own executors count as its work. Without this guard, run() could
    // return in that gap and leave the next read or write unserved.
    auto work = asio::make_work_guard(io);
    std::thread io_thread([&io] { io.run(); });

    std::vector<std::future<std::vector<reply>>> answers;
    for (int c = 0; c < clients; ++c) answers.push_back(std::async(std::launch::async, client, server, requests[c]));

    // A broken server would leave the clients blocked in read: give up then,
    // rather than hang (no destructor can run with threads stuck in reads).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    for (auto& a : answers)
        if (a.wait_until(deadline) != std::future_status::ready) {
            std::printf("FAIL: a client got no reply within 2 minutes\n");
            std::fflush(stdout);
            std::_Exit(1);
        }

    bool ok = true;
    std::uint64_t expected_total = 0;
    for (int c = 0; c < clients; ++c) {
        const std::vector<reply> got = answers[c].get();
        ok &= got.size() == requests[c].size();
        for (std::size_t i = 0; i < got.size() && i < requests[c].size(); ++i) {
            const std::uint64_t n = requests[c][i];
            const std::uint64_t want = sieve_sum_below(n);
            expected_total += want;
            const bool right = got[i].n == n && got[i].sum == want;
            ok &= right;
            std::printf("client %d: sum of primes below %6llu = %12llu (sieve: %12llu) %s\n", c,
                        static_cast<unsigned long long>(got[i].n), static_cast<unsigned long long>(got[i].sum),
                        static_cast<unsigned long long>(want), right ? "ok" : "WRONG");
        }
    }

    // The clients have hung up, so each session reads an end of file and
    // ends; then the io_context may stop once it runs out of work.
    const bool closed = all_closed.get_future().wait_until(deadline) == std::future_status::ready;
    ok &= closed;
    std::printf("every connection closed on the server: %s\n", closed ? "ok" : "WRONG");
    work.reset();
    if (!closed) io.stop(); // do not wait for connections that will not end
    io_thread.join();

    // Every reply was written after its statistics update was posted; wait
    // for the statistics strand to have run them all before reading.
    auto counted = stats.all_counted.get_future();
    const bool all_counted = counted.wait_until(deadline) == std::future_status::ready;
    ok &= all_counted;
    if (all_counted) {
        const bool counts_right = stats.requests == expected_requests && stats.total == expected_total;
        ok &= counts_right;
        std::printf("statistics strand: %d requests (expected %d), total %llu (expected %llu) %s\n", stats.requests,
                    expected_requests, static_cast<unsigned long long>(stats.total),
                    static_cast<unsigned long long>(expected_total), counts_right ? "ok" : "WRONG");
    } else {
        std::printf("FAIL: the statistics strand did not count every request\n");
    }

    // Graceful: the pool runs what is queued (the sessions' last handlers).
    pool.shutdown();
    ok &= pool.await_termination(std::chrono::minutes(1));
    const int off = misplaced.load();
    ok &= off == 0;
    std::printf("handlers outside their strand on the pool: %d %s\n", off, off == 0 ? "ok" : "WRONG");

    std::printf("%s\n", ok ? "all checks passed" : "SOME CHECKS FAILED");
    return ok ? 0 : 1;
}
