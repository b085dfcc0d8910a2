// The Java peer of crew's benchmarks: the same workloads on
// java.util.concurrent's ThreadPoolExecutor ("tpe", as newFixedThreadPool)
// and ScheduledThreadPoolExecutor ("stpe"; "stpe-schedule" for W6's
// schedule() row).
//
//   java CrewPeers <w1|w2|w3|w4|w5|w6> <tpe|stpe|stpe-schedule> [--smoke] [--out DIR]
//
// Prints one line "RESULT v1 v2 ..." with the workload's metrics, in the
// units and order of the C++ programs (bench/w*.cpp), which run this as a
// subprocess once per repetition, interleaved with the C++ pools. Each run
// warms the JIT up on the same workload before measuring.
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

public final class CrewPeers {
    private static boolean smoke;
    private static String outDir; // where W4 writes its lateness distribution (first repetition only)

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: java CrewPeers <w1|w2|w3|w4|w5|w6> <tpe|stpe|stpe-schedule> [--smoke] [--out DIR]");
            System.exit(2);
        }
        for (int i = 2; i < args.length; ++i) {
            if (args[i].equals("--smoke")) smoke = true;
            else if (args[i].equals("--out") && i + 1 < args.length) outDir = args[++i];
        }
        final String impl = args[1];
        double[] result;
        switch (args[0]) {
            case "w1": result = throughput(impl, 1); break;
            case "w2": result = throughput(impl, 2); break;
            case "w3": result = roundTrip(impl); break;
            case "w4": result = timers(); break;
            case "w5": result = idle(impl); break;
            case "w6": result = allocations(impl); break;
            default: throw new IllegalArgumentException(args[0]);
        }
        StringBuilder line = new StringBuilder("RESULT");
        for (double v : result) line.append(' ').append(Double.isNaN(v) ? "nan" : Double.toString(v));
        System.out.println(line);
    }

    private static ThreadPoolExecutor pool(String impl, int threads) {
        ThreadPoolExecutor pool = impl.equals("stpe")
                ? new ScheduledThreadPoolExecutor(threads)
                : new ThreadPoolExecutor(threads, threads, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>());
        pool.prestartAllCoreThreads();
        return pool;
    }

    private static void close(ExecutorService pool) throws InterruptedException {
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
    }

    // Counts tasks down; the last one opens the latch.
    private static final class Completion {
        private final AtomicLong left;
        private final CountDownLatch done = new CountDownLatch(1);
        Completion(long n) { left = new AtomicLong(n); }
        void hit() { if (left.decrementAndGet() == 0) done.countDown(); }
        void await() throws InterruptedException { done.await(); }
    }

    // ---- W1, W2: million tasks per second ----------------------------------

    private static double throughputPass(String impl, long tasks, int producers) throws Exception {
        ThreadPoolExecutor pool = pool(impl, 2);
        Completion done = new Completion(tasks);
        Runnable job = done::hit;
        CyclicBarrier go = new CyclicBarrier(producers + 1);
        Thread[] threads = new Thread[producers];
        for (int p = 0; p < producers; ++p) {
            final long mine = tasks / producers + (p < tasks % producers ? 1 : 0);
            threads[p] = new Thread(() -> {
                try {
                    go.await();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                for (long i = 0; i < mine; ++i) pool.execute(job);
            });
            threads[p].start();
        }
        go.await();
        long start = System.nanoTime();
        done.await();
        double seconds = (System.nanoTime() - start) / 1e9;
        for (Thread t : threads) t.join();
        close(pool);
        return tasks / seconds / 1e6;
    }

    private static double[] throughput(String impl, int producers) throws Exception {
        long tasks = smoke ? 20_000 : 1_000_000;
        for (int i = 0; i < 3; ++i) throughputPass(impl, tasks / 5, producers); // JIT warm-up
        return new double[] {throughputPass(impl, tasks, producers)};
    }

    // ---- W3: submit -> get, p50 and p99 in microseconds --------------------

    private static double[] roundTrip(String impl) throws Exception {
        int n = smoke ? 2_000 : 100_000;
        ThreadPoolExecutor pool = pool(impl, 2);
        long sink = 0;
        for (int i = 0; i < n; ++i) { // JIT warm-up
            final int v = i;
            sink += pool.submit((Callable<Integer>) () -> v).get();
        }
        double[] us = new double[n];
        for (int i = 0; i < n; ++i) {
            final int v = i;
            long start = System.nanoTime();
            sink += pool.submit((Callable<Integer>) () -> v).get();
            us[i] = (System.nanoTime() - start) / 1e3;
        }
        close(pool);
        Arrays.sort(us);
        if (sink == 42) System.out.println();
        return new double[] {quantile(us, 0.5), quantile(us, 0.99)};
    }

    // ---- W4: lateness of delayed tasks, CPU time, schedule() cost ------------
    // Returns, as w4_timers.cpp: lateness p50, p99, max (us), CPU (s),
    // schedule() per call (ns: the scheduling loop's wall time / n), lateness
    // p50 and p99 of the tasks due before the loop ended, and of the others.

    private static double[] timers() throws Exception {
        int n = smoke ? 2_000 : 100_000;
        long span = smoke ? 200_000_000L : 2_000_000_000L;
        { // JIT warm-up on a short run of the same kind
            ScheduledThreadPoolExecutor warm = new ScheduledThreadPoolExecutor(2);
            Completion done = new Completion(n);
            for (int i = 0; i < n; ++i) warm.schedule(done::hit, i % 1000, TimeUnit.MICROSECONDS);
            done.await();
            close(warm);
        }
        Random rng = new Random(1234);
        long[] late = new long[n];
        Completion done = new Completion(n);
        ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(2);
        pool.prestartAllCoreThreads();
        long cpuBefore = processCpuNanos();
        long[] dues = new long[n];
        for (int i = 0; i < n; ++i) dues[i] = (long) (rng.nextDouble() * span); // drawn before the clock starts
        long base = System.nanoTime();
        for (int i = 0; i < n; ++i) {
            final int k = i;
            final long due = base + dues[i];
            pool.schedule(() -> {
                late[k] = System.nanoTime() - due;
                done.hit();
            }, due - System.nanoTime(), TimeUnit.NANOSECONDS);
        }
        long loopEnd = System.nanoTime();
        done.await();
        double cpu = (processCpuNanos() - cpuBefore) / 1e9;
        close(pool);
        double[] us = new double[n];
        double[] burst = new double[n], after = new double[n];
        int inBurst = 0, afterBurst = 0;
        for (int i = 0; i < n; ++i) {
            us[i] = late[i] / 1e3;
            if (base + dues[i] - loopEnd < 0) burst[inBurst++] = us[i];
            else after[afterBurst++] = us[i];
        }
        Arrays.sort(us);
        burst = Arrays.copyOf(burst, inBurst);
        after = Arrays.copyOf(after, afterBurst);
        Arrays.sort(burst);
        Arrays.sort(after);
        if (outDir != null) {
            StringBuilder cdf = new StringBuilder();
            for (int q = 0; q <= 1000; ++q) cdf.append(quantile(us, q / 1000.0)).append(' ').append(q / 1000.0).append('\n');
            Files.writeString(Path.of(outDir, "W4_lateness_java_ScheduledThreadPoolExecutor.dat"), cdf);
        }
        return new double[] {quantile(us, 0.5), quantile(us, 0.99), us[n - 1], cpu, (double) (loopEnd - base) / n,
                             quantile(burst, 0.5), quantile(burst, 0.99), quantile(after, 0.5), quantile(after, 0.99)};
    }

    // ---- W5: 64 idle threads: CPU ms over the idle time, RSS growth MiB ----

    private static double[] idle(String impl) throws Exception {
        int threads = smoke ? 8 : 64;
        long quietMs = smoke ? 200 : 5000;
        long rssBefore = rssKib();
        ThreadPoolExecutor pool = pool(impl, threads);
        CyclicBarrier all = new CyclicBarrier(threads);
        Completion done = new Completion(threads);
        for (int i = 0; i < threads; ++i)
            pool.execute(() -> {
                try {
                    all.await();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                done.hit();
            });
        done.await();
        Thread.sleep(100);
        long cpuBefore = processCpuNanos();
        Thread.sleep(quietMs);
        double cpuMs = (processCpuNanos() - cpuBefore) / 1e6;
        long rssAfter = rssKib();
        close(pool);
        return new double[] {cpuMs, (rssAfter - rssBefore) / 1024.0};
    }

    // ---- W6: bytes allocated per execute (or schedule) of a 48-byte task -------

    private static double[] allocations(String impl) throws Exception {
        long n = smoke ? 10_000 : 100_000;
        boolean schedule = impl.equals("stpe-schedule"); // schedule(task, U[0, 1 ms]) instead of execute(task)
        ThreadPoolExecutor pool = pool(schedule ? "stpe" : impl, 2);
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (int i = 0; i < 3; ++i) allocationPass(pool, n, schedule); // JIT warm-up
        long before = threads.getTotalThreadAllocatedBytes();
        allocationPass(pool, n, schedule);
        long bytes = threads.getTotalThreadAllocatedBytes() - before;
        close(pool);
        // Java cannot count allocations, only bytes.
        return new double[] {Double.NaN, (double) bytes / n};
    }

    // Batches of 1000, waiting after each, as the C++ program does.
    private static void allocationPass(ThreadPoolExecutor pool, long n, boolean schedule) throws InterruptedException {
        final long a = 1, b = 2, c = 3, d = 4, e = 5; // 40 bytes of captures plus the reference: crew's 48
        long seed = 1234; // xorshift: the delays, without allocating
        for (long submitted = 0; submitted < n; submitted += 1000) {
            Completion done = new Completion(1000);
            for (int i = 0; i < 1000; ++i) {
                Runnable job = () -> {
                    if (a + b + c + d + e == 15) done.hit();
                };
                if (schedule) {
                    seed ^= seed << 13;
                    seed ^= seed >>> 7;
                    seed ^= seed << 17;
                    long delay = Long.remainderUnsigned(seed, 1_000_001L); // U[0, 1 ms] in ns
                    ((ScheduledThreadPoolExecutor) pool).schedule(job, delay, TimeUnit.NANOSECONDS);
                } else {
                    pool.execute(job);
                }
            }
            done.await();
        }
    }

    // ---- helpers ----------------------------------------------------------------

    private static double quantile(double[] sorted, double q) {
        int i = (int) Math.ceil(q * sorted.length);
        return sorted[Math.min(sorted.length - 1, Math.max(0, i - 1))];
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static long rssKib() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status")))
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
        return -1;
    }
}
