package com.hospital.surveyinbox.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

/**
 * CPU time of the benchmark's processes, read from {@code /proc/<pid>/stat} (utime + stime, in clock ticks),
 * and the service's memory. Each source is a function returning its ticks so far; a {@link Window} takes the
 * difference over the measured interval.
 * <ul>
 *   <li>service: this JVM (the service, plus the idle simulator and the benchmark's own threads);</li>
 *   <li>postgres: the postmaster, its live backends, and backends that ended (their time is in the
 *   postmaster's cutime/cstime once reaped);</li>
 *   <li>broker: the Kafka JVM (its own process in the benchmark);</li>
 *   <li>load generator: {@code wrk}, a child of this JVM: its time lands in this JVM's cutime/cstime when it
 *   is reaped, and nothing else of this JVM's children ends during a window.</li>
 * </ul>
 */
final class ProcAccounting {

    /** Clock ticks per second ({@code getconf CLK_TCK}; 100 on Linux). */
    static final long HZ = clockTicks();

    private final Map<String, LongSupplier> sources = new LinkedHashMap<>();
    /** A benchmarked JVM of its own whose threads are split by name (from /proc), or 0. */
    private long threadsOf;

    ProcAccounting add(String name, LongSupplier ticks) {
        sources.put(name, ticks);
        return this;
    }

    /** Split the CPU of {@code pid} (a JVM of its own) by thread name in each window. */
    ProcAccounting threadsOf(long pid) {
        this.threadsOf = pid;
        return this;
    }

    Window start() {
        return new Window(read(), System.nanoTime(), threadsOf != 0 ? taskTicksByGroup(threadsOf) : threadCpuByGroup(),
                ticks(ProcessHandle.current().pid(), false));
    }

    private Map<String, Long> read() {
        Map<String, Long> now = new LinkedHashMap<>();
        sources.forEach((name, source) -> now.put(name, source.getAsLong()));
        return now;
    }

    final class Window {
        private final Map<String, Long> before;
        private final long startNanos;
        private final Map<String, Long> threadsBefore;
        private final long selfBefore;

        private Window(Map<String, Long> before, long startNanos, Map<String, Long> threadsBefore, long selfBefore) {
            this.before = before;
            this.startNanos = startNanos;
            this.threadsBefore = threadsBefore;
            this.selfBefore = selfBefore;
        }

        /** CPU-µs per unit of work (e.g. per accepted request) and cores used, per process, since {@link #start()}. */
        Map<String, Object> stop(long units) {
            Map<String, Long> after = read();
            double seconds = (System.nanoTime() - startNanos) / 1e9;
            Map<String, Double> perUnit = new LinkedHashMap<>();
            Map<String, Double> cores = new LinkedHashMap<>();
            double total = 0;
            for (var e : after.entrySet()) {
                long ticks = e.getValue() - before.get(e.getKey());
                double micros = ticks * 1_000_000.0 / HZ;
                total += micros;
                perUnit.put(e.getKey(), units == 0 ? Double.NaN : round(micros / units));
                cores.put(e.getKey(), Math.round(micros / 1e6 / seconds * 100) / 100.0);
            }
            perUnit.put("total", units == 0 ? Double.NaN : round(total / units));
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("cpu_us_per_unit", perUnit);
            result.put("cores_used", cores);
            result.put("window_s", Math.round(seconds * 100) / 100.0);
            if (threadsOf != 0) {
                // the JVM's threads by name, digits folded: ticks of /proc/<pid>/task/<tid>/stat (GC and JIT included)
                Map<String, Long> threadsAfter = taskTicksByGroup(threadsOf);
                List<Map.Entry<String, Long>> deltas = new java.util.ArrayList<>();
                threadsAfter.forEach((name, t) -> deltas.add(Map.entry(name, t - threadsBefore.getOrDefault(name, 0L))));
                deltas.sort(Map.Entry.<String, Long>comparingByValue().reversed());
                Map<String, Double> byThread = new LinkedHashMap<>();
                for (var e : deltas.subList(0, Math.min(12, deltas.size()))) {
                    byThread.put(e.getKey(), units == 0 ? Double.NaN : round(e.getValue() * 1_000_000.0 / HZ / units));
                }
                result.put("jvm_cpu_us_per_unit_by_thread", byThread);
                return result;
            }
            if (!after.containsKey("service")) {
                return result; // the service is not in this JVM (the peer's windows)
            }
            // where this JVM's CPU went: its Java threads by name (digits folded), the rest (GC, JIT) apart
            Map<String, Long> threadsAfter = threadCpuByGroup();
            Map<String, Double> byThread = new LinkedHashMap<>();
            long javaThreads = 0;
            List<Map.Entry<String, Long>> deltas = new java.util.ArrayList<>();
            for (var e : threadsAfter.entrySet()) {
                long d = e.getValue() - threadsBefore.getOrDefault(e.getKey(), 0L);
                if (d > 0) {
                    deltas.add(Map.entry(e.getKey(), d));
                    javaThreads += d;
                }
            }
            deltas.sort(Map.Entry.<String, Long>comparingByValue().reversed());
            for (var e : deltas.subList(0, Math.min(8, deltas.size()))) {
                byThread.put(e.getKey(), units == 0 ? Double.NaN : round(e.getValue() / 1000.0 / units));
            }
            if (units > 0) {
                double jvmMicros = (ticks(ProcessHandle.current().pid(), false) - selfBefore) * 1_000_000.0 / HZ;
                byThread.put("(not Java threads: GC, JIT compilers, VM)", round(Math.max(0, jvmMicros - javaThreads / 1000.0) / units));
            }
            result.put("service_cpu_us_per_unit_by_thread", byThread);
            return result;
        }
    }

    /** utime + stime of one process (+ cutime + cstime: children it has reaped). */
    static long ticks(long pid, boolean withReapedChildren) {
        String[] f = statFields(pid);
        if (f == null) {
            return 0;
        }
        long t = Long.parseLong(f[11]) + Long.parseLong(f[12]);
        return withReapedChildren ? t + Long.parseLong(f[13]) + Long.parseLong(f[14]) : t;
    }

    /** Clock ticks of a process's live threads, by name ({@code comm}, 15 characters) with digits folded. */
    static Map<String, Long> taskTicksByGroup(long pid) {
        Map<String, Long> byName = new java.util.HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String[] f = statFields(task);
                    if (f != null) {
                        byName.merge(Files.readString(task.resolve("comm")).trim().replaceAll("\\d+", "#"),
                                Long.parseLong(f[11]) + Long.parseLong(f[12]), Long::sum);
                    }
                } catch (IOException | RuntimeException gone) {
                    // the thread ended between the listing and the read
                }
            }
        } catch (IOException gone) {
            // the process ended
        }
        return byName;
    }

    /** CPU-ns of this JVM's live Java threads, by name with digits folded ("http-nio-#-exec-#"). */
    static Map<String, Long> threadCpuByGroup() {
        var threads = ManagementFactory.getThreadMXBean();
        Map<String, Long> byName = new java.util.HashMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            long cpu = threads.getThreadCpuTime(t.getId());
            if (cpu > 0) {
                byName.merge(t.getName().replaceAll("\\d+", "#"), cpu, Long::sum);
            }
        }
        return byName;
    }

    /** CPU of this JVM's live threads whose name passes the test (e.g. the in-JVM downstream simulator), in ticks. */
    static long threadTicks(java.util.function.Predicate<String> name) {
        var threads = ManagementFactory.getThreadMXBean();
        long nanos = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (name.test(t.getName())) {
                long cpu = threads.getThreadCpuTime(t.getId());
                nanos += Math.max(0, cpu);
            }
        }
        return nanos * HZ / 1_000_000_000L;
    }

    /** CPU ticks of a JVM's JIT compiler threads ("C1/C2 CompilerThread…", "C# CompilerThre" folded). */
    static long compilerTicks(long pid) {
        return taskTicksByGroup(pid).entrySet().stream().filter(e -> e.getKey().startsWith("C# Compiler"))
                .mapToLong(Map.Entry::getValue).sum();
    }

    /** Ticks of this JVM's reaped children (the load generator): cutime + cstime. */
    static long reapedChildrenOfSelf() {
        String[] f = statFields(ProcessHandle.current().pid());
        return Long.parseLong(f[13]) + Long.parseLong(f[14]);
    }

    /** The postmaster, its reaped backends, and its live children. */
    static long postgresTicks(long postmaster) {
        long total = ticks(postmaster, true);
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) procs::iterator) {
                String name = p.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                String[] f = statFields(Long.parseLong(name));
                if (f != null && Long.parseLong(f[1]) == postmaster) { // f[1] = ppid
                    total += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return total;
    }

    /** Resident set size of a process, in MiB. */
    static double rssMiB(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return round(Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0);
                }
            }
        } catch (IOException e) {
            return Double.NaN;
        }
        return Double.NaN;
    }

    /** This JVM's heap in use and committed, in MiB. */
    static Map<String, Double> heapMiB() {
        var heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("heap_used_mib", round(heap.getUsed() / 1048576.0));
        m.put("heap_committed_mib", round(heap.getCommitted() / 1048576.0));
        return m;
    }

    /** Fields of /proc/pid/stat after the command name: [0] = state, [1] = ppid, [11] = utime, [12] = stime, [13] = cutime, [14] = cstime. */
    private static String[] statFields(long pid) {
        return statFields(Path.of("/proc/" + pid));
    }

    /** The same for a process or thread directory (/proc/pid or /proc/pid/task/tid). */
    private static String[] statFields(Path proc) {
        try {
            String stat = Files.readString(proc.resolve("stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        } catch (IOException | RuntimeException e) {
            return null; // the process ended
        }
    }

    private static long clockTicks() {
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK").start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            p.waitFor();
            return Long.parseLong(out);
        } catch (Exception e) {
            return 100;
        }
    }

    static double round(double v) {
        return Math.round(v * 10) / 10.0;
    }
}
