package com.hospital.surveyinbox.shape;

import com.hospital.surveyinbox.support.EmbeddedServices;
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
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;

/**
 * One pod of the production-shape harness: the real application in a JVM of its own, with its own public and
 * management ports, pointed at the test JVM's PostgreSQL (through the harness's proxy), Kafka, Redis and
 * downstream simulator. Started, probed for readiness and stopped the way Kubernetes does it.
 */
final class ServicePod implements AutoCloseable {

    final String name;
    final int port;
    final int managementPort;
    private final Process process;
    private final Path log;

    private ServicePod(String name, int port, int managementPort, Process process, Path log) {
        this.name = name;
        this.port = port;
        this.managementPort = managementPort;
        this.process = process;
        this.log = log;
    }

    static ServicePod start(String name, Map<String, String> properties) {
        try {
            int port = EmbeddedServices.freePort();
            int management = EmbeddedServices.freePort();
            String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            Path log = Files.createTempFile("pod-" + name + "-", ".log");
            List<String> command = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    // small and quick to start: four of these share two cores with the database and the broker
                    "-Xmx320m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k",
                    "-Dembedded.services.off=true", "-cp", classpath,
                    "com.hospital.surveyinbox.SurveyInboxAdapterApplication",
                    "--server.port=" + port, "--management.server.port=" + management));
            properties.forEach((k, v) -> command.add("--" + k + "=" + v));
            Process process = new ProcessBuilder(command).directory(new File("."))
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            return new ServicePod(name, port, management, process, log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Ready as the kubelet sees it: the readiness probe answers 200. A pod that dies or is not ready in time is
     * killed (a pod left starting would join the consumer group and take CPU from every later scenario) and the
     * failure carries its log's tail, so a CI report shows why.
     */
    ServicePod awaitReady(Duration timeout) {
        long since = System.nanoTime();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        try {
            Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(500)).until(() -> {
                if (!process.isAlive()) {
                    throw new IllegalStateException("pod " + name + " died");
                }
                try {
                    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort
                            + "/actuator/health/readiness")).timeout(Duration.ofSeconds(2)).build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
                } catch (IOException e) {
                    return false;
                }
            });
        } catch (RuntimeException e) {
            close();
            throw new AssertionError("pod " + name + " not ready after " + seconds(since) + " s (" + e.getMessage()
                    + "), killed; its log ends:\n" + tail(), e);
        }
        System.out.println("[shape] " + name + " ready after " + seconds(since) + " s");
        return this;
    }

    private static long seconds(long since) {
        return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - since);
    }

    /** SIGTERM, as the kubelet sends it after the pod left the endpoints; SIGKILL after the grace period. */
    boolean terminate(Duration grace) throws InterruptedException {
        process.destroy();
        if (process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            return true;
        }
        process.destroyForcibly().waitFor();
        return false;
    }

    boolean alive() {
        return process.isAlive();
    }

    String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String tail() {
        String all = log();
        return all.length() > 4000 ? all.substring(all.length() - 4000) : all;
    }

    /** Killed at once (SIGKILL), as a node failure or an end of the harness does. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
