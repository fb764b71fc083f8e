package com.hospital.surveyinbox.fault;

import com.hospital.surveyinbox.support.EmbeddedServices;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A second instance of the service in its own JVM, pointed at this JVM's embedded PostgreSQL, Kafka,
 * Redis and simulator — so a test can kill it with SIGKILL mid-processing.
 */
final class ServiceProcess implements AutoCloseable {

    private final Process process;
    private final Path log;

    private ServiceProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    static ServiceProcess start(Map<String, String> properties) throws IOException {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path log = Files.createTempFile("service-process", ".log");
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-Dembedded.services.off=true", "-cp", classpath,
                "com.hospital.surveyinbox.SurveyInboxAdapterApplication"));
        EmbeddedServices.get().properties().forEach((k, v) -> command.add("--" + k + "=" + v));
        properties.forEach((k, v) -> command.add("--" + k + "=" + v));
        Process process = new ProcessBuilder(command).directory(new File("."))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new ServiceProcess(process, log);
    }

    String log() throws IOException {
        return Files.readString(log);
    }

    boolean alive() {
        return process.isAlive();
    }

    /** SIGTERM, as Kubernetes stops a pod: the service shuts down gracefully (consumers leave the group). */
    boolean terminate(java.time.Duration grace) throws InterruptedException {
        process.destroy();
        if (process.waitFor(grace.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
            return true;
        }
        kill();
        return false;
    }

    /** SIGKILL: no shutdown hook, no graceful anything. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
