// Java's ForkJoinPool on compose_tbb's C4j (issue #32's spawn-cost peer):
// fib(n) with no cutoff, every node forks one child and computes the other,
// on a pool of 2 (the C++ contenders' thread count on the 2-vCPU machine).
//
//   javac -d /tmp/fj bench/java/ForkJoinFib.java
//   java -cp /tmp/fj ForkJoinFib 32 3     # n, timed passes (after 3 warm-up passes)
//
// Prints one line per timed pass, wall ms. Run it alternately with
// `compose_tbb --only task_group` (doc/benchmarks.md, "Fork-join (issue #32)"),
// whose C4j row has this shape (C4 spawns both children).
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;

public final class ForkJoinFib {
    private static final class Fib extends RecursiveTask<Long> {
        private final int n;
        Fib(int n) { this.n = n; }
        @Override protected Long compute() {
            if (n < 2) return (long) n;
            Fib child = new Fib(n - 1);
            child.fork();
            long other = new Fib(n - 2).compute();
            return child.join() + other;
        }
    }

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        int passes = Integer.parseInt(args[1]);
        ForkJoinPool pool = new ForkJoinPool(2);
        for (int w = 0; w < 3; ++w) pool.invoke(new Fib(n)); // the JIT's warm-up
        for (int p = 0; p < passes; ++p) {
            long start = System.nanoTime();
            long value = pool.invoke(new Fib(n));
            System.out.printf("ForkJoinPool fib(%d) = %d: %.1f ms%n", n, value, (System.nanoTime() - start) / 1e6);
        }
        pool.shutdown();
    }
}
