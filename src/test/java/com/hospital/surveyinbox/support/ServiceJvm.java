package com.hospital.surveyinbox.support;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;

/**
 * A JVM of its own on the tests' classpath, pointed by its arguments at this JVM's embedded services, its output
 * in a log file: the service as a second instance (fault suite), a pod (production-shape harness), the service or
 * the peer apart (benchmark). One way to start, await, stop and read such a JVM, as Kubernetes treats a pod:
 * SIGTERM with a grace period, SIGKILL after it or for a node failure.
 */
public final class ServiceJvm implements AutoCloseable {

    /** The part of {@link #QUICK_START} any test JVM can take (the test broker): no bytecode verification. */
    public static final List<String> NO_VERIFICATION = List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:-BytecodeVerificationRemote");

    /**
     * Options for a service JVM that must start fast on two shared cores (C1 only, serial collector, small stacks,
     * no bytecode verification of the classpath's classes, our build's and Maven's): measured on the production-shape
     * harness, three pods started together in 37 s each; the fault suite's two instances joining a rebalance storm
     * under load took 74-77 s with the defaults. Without verification a start took 12.4-15.3 s against 14.9-17.9 s
     * (alternating, idle machine). Not for figures (benchmark), never for a deployment.
     */
    public static final List<String> QUICK_START = java.util.stream.Stream.concat(
            java.util.stream.Stream.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k"), NO_VERIFICATION.stream()).toList();

    /** The service's main class. */
    public static final String SERVICE = "com.hospital.surveyinbox.SurveyInboxAdapterApplication";

    private final String name;
    private final Process process;
    private final Path log;

    private ServiceJvm(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /**
     * Starts {@code mainClass} with {@code jvmOptions} (blank ones dropped) and each argument as {@code --key=value},
     * in the order given; the embedded services stay this JVM's ({@code embedded.services.off}).
     */
    public static ServiceJvm start(String name, List<String> jvmOptions, String mainClass, Map<String, ?> arguments) {
        try {
            Path log = Files.createTempFile(name + "-", ".log");
            List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
            jvmOptions.stream().filter(o -> !o.isBlank()).forEach(command::add);
            command.addAll(List.of("-Dembedded.services.off=true", "-cp",
                    System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))));
            command.addAll(EndsWithParent.withThisJvm(mainClass));
            arguments.forEach((k, v) -> command.add("--" + k + "=" + v));
            Process process = new ProcessBuilder(command).directory(new File("."))
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            return new ServiceJvm(name, process, log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The service's readiness probe on {@code managementPort} answers 200, as the kubelet checks it. */
    public static Callable<Boolean> readinessProbe(int managementPort) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest probe = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + "/actuator/health/readiness"))
                .timeout(Duration.ofSeconds(2)).build();
        return () -> http.send(probe, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    }

    /**
     * Waits until {@code ready} answers true (an {@link IOException} counts as not yet). A JVM that exits or is not
     * ready in time is killed (one left starting would take CPU from every later test) and the failure carries
     * its log's tail, so a CI report shows why.
     */
    public ServiceJvm awaitReady(Duration timeout, Callable<Boolean> ready) {
        long since = System.nanoTime();
        try {
            Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(500)).until(() -> {
                if (!process.isAlive()) {
                    throw new IllegalStateException(name + " exited");
                }
                try {
                    return ready.call();
                } catch (IOException e) {
                    return false;
                }
            });
        } catch (RuntimeException e) {
            close();
            throw new AssertionError(name + " not ready after " + seconds(since) + " s (" + e.getMessage()
                    + "), killed; its log ends:\n" + tail(), e);
        }
        System.out.println("[jvm] " + name + " ready after " + seconds(since) + " s");
        return this;
    }

    private static long seconds(long since) {
        return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - since);
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    public String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The last 4,000 characters of its log. */
    public String tail() {
        String all = log();
        return all.length() > 4000 ? all.substring(all.length() - 4000) : all;
    }

    /** SIGTERM, as the kubelet sends it: true if it ended within {@code grace}, else SIGKILL and false. */
    public boolean terminate(Duration grace) throws InterruptedException {
        process.destroy();
        if (process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            return true;
        }
        kill();
        return false;
    }

    /** SIGKILL: no shutdown hook, no graceful anything (a node failure, the OOM killer). */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** Killed at once if still running (SIGKILL). */
    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
