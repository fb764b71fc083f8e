package com.hospital.surveyinbox.support;

import java.io.File;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * A real KRaft Kafka broker (combined broker + controller) in its own JVM, with its own log directory and
 * fixed ports, so a test can stop it the way an operator or a crash would and start it again on the same
 * data: the same cluster, topics, committed consumer offsets. The embedded broker of
 * {@link EmbeddedServices} is shared by every test context and cannot be restarted in place.
 */
public final class KafkaProcess implements AutoCloseable {

    private final Path dir;
    private final Path config;
    private final int port;
    private Process process;
    private Path log;

    private KafkaProcess(Path dir, Path config, int port) {
        this.dir = dir;
        this.config = config;
        this.port = port;
    }

    /** Formats a new log directory and starts the broker; returns once it accepts connections. */
    public static KafkaProcess start() throws IOException, InterruptedException {
        return start(List.of());
    }

    /** As {@link #start()}, with {@code extraConfig} lines appended to the broker's server.properties. */
    public static KafkaProcess start(List<String> extraConfig) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("kafka-process");
        int port = EmbeddedServices.freePort();
        int controllerPort = EmbeddedServices.freePort();
        Path config = dir.resolve("server.properties");
        Files.writeString(config, String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@localhost:" + controllerPort,
                "listeners=PLAINTEXT://localhost:" + port + ",CONTROLLER://localhost:" + controllerPort,
                "advertised.listeners=PLAINTEXT://localhost:" + port,
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name=PLAINTEXT",
                "log.dirs=" + dir.resolve("data"),
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=4",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                "auto.create.topics.enable=true",
                String.join("\n", extraConfig),
                ""));
        KafkaProcess kafka = new KafkaProcess(dir, config, port);
        Process format = kafka.java("kafka.tools.StorageTool", "format", "-t", randomClusterId(), "-c", config.toString())
                .redirectOutput(dir.resolve("format.log").toFile()).start();
        if (!format.waitFor(60, TimeUnit.SECONDS) || format.exitValue() != 0) {
            throw new IllegalStateException("kafka storage format failed: " + Files.readString(dir.resolve("format.log")));
        }
        kafka.startBroker();
        return kafka;
    }

    public String bootstrapServers() {
        return "localhost:" + port;
    }

    /** Starts the broker on the existing log directory; returns once it accepts connections. */
    public synchronized void startBroker() throws IOException {
        log = dir.resolve("broker-" + System.nanoTime() + ".log");
        process = java("kafka.Kafka", config.toString()).redirectOutput(log.toFile()).start();
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
            if (!process.isAlive()) {
                throw new IllegalStateException("kafka broker exited: " + Files.readString(log));
            }
            try (Socket ignored = new Socket("localhost", port)) {
                return true;
            } catch (IOException e) {
                return false;
            }
        });
    }

    /** Stops the broker as {@code kafka-server-stop} does (SIGTERM, controlled shutdown) and waits for its exit. */
    public synchronized void stopBroker() throws InterruptedException {
        stopBroker(Duration.ofSeconds(60));
    }

    /** As {@link #stopBroker()}, killing the broker if its controlled shutdown takes longer than {@code grace}. */
    public synchronized void stopBroker(Duration grace) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }

    public java.util.Optional<ProcessHandle> handle() {
        return process == null || !process.isAlive() ? java.util.Optional.empty() : java.util.Optional.of(process.toHandle());
    }

    /** The broker's folder (logs, config): removed on stop, or by the local run's orphan watcher. */
    public Path directory() {
        return dir;
    }

    /** Removes the log directory (after {@link #stopBroker()} or {@link #close()}). */
    public void deleteDirectory() throws IOException {
        org.springframework.util.FileSystemUtils.deleteRecursively(dir);
    }

    public String log() throws IOException {
        return Files.readString(log);
    }

    @Override
    public synchronized void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly().waitFor();
        }
    }

    private ProcessBuilder java(String mainClass, String... args) {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>();
        // a session of its own where setsid exists: a Ctrl-C in the terminal reaches the service, which stops the broker last
        Tools.setsid().ifPresent(setsid -> command.add(setsid.toString()));
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx384m"));
        command.addAll(ServiceJvm.NO_VERIFICATION); // a restart sooner
        command.addAll(List.of("-Dlogback.configurationFile=" + quietLogging(), "-cp", classpath));
        command.addAll(EndsWithParent.withThisJvm(mainClass));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).directory(new File(".")).redirectErrorStream(true);
    }

    private Path quietLogging() {
        Path file = dir.resolve("logback.xml");
        try {
            if (!Files.exists(file)) {
                Files.writeString(file, """
                        <configuration>
                          <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
                            <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n</pattern></encoder>
                          </appender>
                          <root level="WARN"><appender-ref ref="OUT"/></root>
                          <logger name="kafka.server.KafkaServer" level="INFO"/>
                          <logger name="kafka.server.BrokerServer" level="INFO"/>
                        </configuration>
                        """);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return file;
    }

    /** A KRaft cluster id: 16 random bytes, URL-safe base64 without padding. */
    /**
     * Kafka's own id: never starts with '-', which the storage tool's argument parser would take for an
     * option (a URL-safe Base64 UUID does so once in 64 runs: "argument --cluster-id: expected one argument").
     */
    private static String randomClusterId() {
        return org.apache.kafka.common.Uuid.randomUuid().toString();
    }
}
