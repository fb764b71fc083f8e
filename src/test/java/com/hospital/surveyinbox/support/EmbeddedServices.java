package com.hospital.surveyinbox.support;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.util.FileSystemUtils;

/**
 * Real PostgreSQL 17, a real KRaft Kafka broker, a real redis-server and the downstream simulator, started
 * once per JVM and shared by every Spring context of the run. Stopped by one shutdown hook that first
 * closes the tracked contexts, so no consumer logs errors against a vanished broker: PostgreSQL's own
 * shutdown hook is switched off, and with {@link #KAFKA_OWN_PROCESS} the broker runs in a JVM of its own
 * (as in production, and because the in-process test kit deletes its log directory from a shutdown hook
 * of its own, racing the service's last commits). Children that Ctrl-C must not reach are started in a
 * session of their own ({@code setsid}), so the terminal's SIGINT goes to the service and the service
 * alone decides the order.
 */
public final class EmbeddedServices {

    public static final String DB_NAME = "inbox";
    public static final String DB_USER = "postgres";

    /** System property: run the Kafka broker in its own JVM (the local run and the benchmark). */
    public static final String KAFKA_OWN_PROCESS = "embedded.kafka.own-process";

    private static EmbeddedServices instance;

    private final Path pgData;
    private final int pgPort;
    private volatile EmbeddedPostgres postgres;
    private final EmbeddedKafkaKraftBroker kafka;
    private final KafkaProcess kafkaProcess;
    private final int redisPort;
    private volatile RedisProcess redis;
    private final DownstreamSimulator simulator;
    private final List<ConfigurableApplicationContext> contexts = new CopyOnWriteArrayList<>();
    /** The watcher for a JVM that dies without its shutdown hook (local run and tests); null if none could start. */
    private volatile OrphanReaper reaper;
    /** Set when the shutdown hook runs: no watcher is started after it. */
    private volatile boolean closing;

    private EmbeddedServices(boolean withSimulator, int simulatorPort) {
        try {
            pgData = Files.createTempDirectory("survey-inbox-pg");
            pgPort = freePort();
            postgres = startPostgres(pgData, pgPort);
            try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE DATABASE " + DB_NAME);
            }
            if (Boolean.getBoolean(KAFKA_OWN_PROCESS)) {
                kafka = null;
                kafkaProcess = KafkaProcess.start();
            } else {
                kafka = new EmbeddedKafkaKraftBroker(1, 1);
                kafka.brokerProperties(Map.of("auto.create.topics.enable", "true", "log.dir",
                        Files.createTempDirectory("survey-inbox-kafka").toString(),
                        // a retention cap for the provisioner's test topics only (RetentionCapPolicy.CAPPED)
                        "create.topic.policy.class.name", RetentionCapPolicy.class.getName()));
                kafka.afterPropertiesSet();
                kafkaProcess = null;
            }
            redisPort = freePort();
            redis = startRedis(redisPort);
            simulator = withSimulator ? new DownstreamSimulator(simulatorPort) : null;
        } catch (Exception e) {
            throw new IllegalStateException("could not start embedded services", e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(this::shutdown, "embedded-services-stop"));
    }

    /** The shared instance (tests): simulator on a random port with fast latencies. */
    public static synchronized EmbeddedServices get() {
        if (instance == null) {
            instance = new EmbeddedServices(true, 0);
            // a test JVM killed hard (an IDE's stop button, a CI timeout) must not leave them running either
            instance.watchForOrphans();
        }
        return instance;
    }

    /** The local run: simulator on a fixed port with the realistic latency model, unless base URLs are given. */
    public static synchronized EmbeddedServices startForLocalRun(boolean withSimulator, int simulatorPort) {
        if (instance == null) {
            instance = new EmbeddedServices(withSimulator, simulatorPort);
            instance.watchForOrphans();
        }
        return instance;
    }

    /** Starts the {@link OrphanReaper}: a SIGKILL of this JVM must not leave PostgreSQL, the broker and Redis running. */
    private void watchForOrphans() {
        List<Long> term = new java.util.ArrayList<>();
        long postmaster = OrphanReaper.postmaster(pgData);
        // the database's folder goes only with a postmaster the watcher can stop
        List<Path> folders = new java.util.ArrayList<>(postmaster > 0 ? List.of(pgData) : List.of());
        if (kafkaProcess != null) {
            kafkaProcess.handle().ifPresent(h -> term.add(h.pid()));
            folders.add(kafkaProcess.directory());
        }
        term.add(redis.pid());
        try {
            reaper = OrphanReaper.watch(ProcessHandle.current().pid(), term, postmaster, folders);
        } catch (IOException e) {
            System.err.println("embedded services: no orphan watcher (" + e.getMessage() + "); a SIGKILL of this JVM "
                    + "would leave PostgreSQL, the broker and Redis running");
        }
    }

    /** Spring properties that point the service at these services. */
    public Map<String, Object> properties() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("spring.datasource.url", jdbcUrl());
        p.put("spring.datasource.username", DB_USER);
        p.put("spring.datasource.password", "");
        p.put("spring.kafka.bootstrap-servers", kafkaBrokers());
        p.put("camel.component.kafka.brokers", kafkaBrokers());
        p.put("spring.data.redis.host", "localhost");
        p.put("spring.data.redis.port", redisPort);
        if (simulator != null) {
            p.put("adapter.legacy.base-url", simulator.baseUrl() + "/legacy");
            p.put("adapter.account.base-url", simulator.baseUrl() + "/account");
            p.put("adapter.survey.base-url", simulator.baseUrl() + "/survey");
        }
        return p;
    }

    public String jdbcUrl() {
        return "jdbc:postgresql://localhost:" + pgPort + "/" + DB_NAME;
    }

    public DataSource dataSource() {
        return postgres.getDatabase(DB_USER, DB_NAME);
    }

    public String kafkaBrokers() {
        return kafka != null ? kafka.getBrokersAsString() : kafkaProcess.bootstrapServers();
    }

    /** The broker's JVM when it runs in its own process (for CPU accounting), else empty. */
    public java.util.Optional<ProcessHandle> kafkaProcessHandle() {
        return kafkaProcess == null ? java.util.Optional.empty() : kafkaProcess.handle();
    }

    public long redisPid() {
        return redis.pid();
    }

    /** The PostgreSQL postmaster's process (for CPU accounting: its children are the backends). */
    public java.util.Optional<ProcessHandle> postgresProcessHandle() {
        try {
            String pid = Files.readAllLines(pgData.resolve("postmaster.pid")).get(0).trim();
            return ProcessHandle.of(Long.parseLong(pid));
        } catch (IOException | RuntimeException e) {
            return java.util.Optional.empty();
        }
    }

    public DownstreamSimulator simulator() {
        return simulator;
    }

    /** A new empty database on this PostgreSQL (a test that needs no background work of a service); its JDBC URL. */
    public String createDatabase(String name) {
        adminExecute("CREATE DATABASE " + name);
        return jdbcUrl().substring(0, jdbcUrl().lastIndexOf('/') + 1) + name;
    }

    /** A database of its own ({@link #createDatabase}) migrated as the service migrates it; its JDBC URL. */
    public String migratedDatabase(String name) {
        String url = createDatabase(name);
        com.hospital.surveyinbox.config.FlywayConnection.migrate(com.hospital.surveyinbox.config.FlywayConnection.configure(
                org.flywaydb.core.Flyway.configure(), url, DB_USER, "", java.time.Duration.ofSeconds(5), new java.util.Properties())
                .locations("classpath:db/migration").load());
        return url;
    }

    /** Drops a database {@link #createDatabase} made, whoever is still connected to it. */
    public void dropDatabase(String name) {
        adminExecute("DROP DATABASE " + name + " WITH (FORCE)");
    }

    /** As {@link #dropDatabase}, and nothing when there is no such database. */
    public void dropDatabaseIfExists(String name) {
        adminExecute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }

    private void adminExecute(String sql) {
        try (Connection admin = java.sql.DriverManager.getConnection(jdbcUrl(), DB_USER, ""); Statement s = admin.createStatement()) {
            s.execute(sql);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    public int postgresPort() {
        return pgPort;
    }

    public int redisPort() {
        return redisPort;
    }

    /** Stops PostgreSQL (fast shutdown); the data directory survives for {@link #startPostgres()}. */
    public synchronized void stopPostgres() {
        try {
            postgres.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        rewatch();
    }

    /** Starts PostgreSQL again on the same port and data directory. */
    public synchronized void startPostgres() {
        try {
            postgres = startPostgres(pgData, pgPort);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        rewatch();
    }

    /**
     * A restarted service has a new pid the running watcher does not know: replace the watcher. (Found when a
     * suite's JVM was killed after FaultToleranceTest had restarted PostgreSQL and Redis: both were left running.)
     */
    private void rewatch() {
        if (reaper != null && !closing) {
            reaper.cancel();
            reaper = null;
            watchForOrphans();
        }
    }

    public synchronized void stopRedis() {
        redis.stop();
        rewatch(); // a watcher holding a stopped service's pid could signal whatever process is given that pid next
    }

    public synchronized void startRedis() {
        try {
            redis = startRedis(redisPort);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        rewatch();
    }

    void track(ConfigurableApplicationContext context) {
        contexts.add(context);
    }

    private void shutdown() {
        long started = System.nanoTime();
        synchronized (this) { // after a restart in progress has re-armed its watcher, before any other can
            closing = true;
        }
        if (reaper != null) {
            reaper.cancel(); // an ordinary stop: the services are stopped here
        }
        for (ConfigurableApplicationContext context : contexts) {
            try {
                context.close();
            } catch (RuntimeException ignored) {
                // closing anyway
            }
        }
        long contextsClosed = System.nanoTime();
        // the services do not depend on one another: stop them side by side
        List<Thread> stops = List.of(
                start("stop-simulator", () -> {
                    if (simulator != null) {
                        simulator.stop();
                    }
                }),
                start("stop-kafka", this::stopKafka),
                start("stop-redis", () -> {
                    try {
                        redis.stop();
                    } catch (RuntimeException ignored) {
                        // best effort at JVM exit
                    }
                }),
                start("stop-postgres", () -> {
                    try {
                        postgres.close();
                        FileSystemUtils.deleteRecursively(pgData);
                    } catch (IOException | RuntimeException ignored) {
                        // best effort at JVM exit
                    }
                }));
        for (Thread stop : stops) {
            try {
                stop.join(15_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        System.err.printf("embedded services: contexts closed in %d ms, services stopped in %d ms%n",
                (contextsClosed - started) / 1_000_000, (System.nanoTime() - contextsClosed) / 1_000_000);
    }

    private static Thread start(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.start();
        return thread;
    }

    private void stopKafka() {
        try {
            if (kafka != null) {
                kafka.destroy();
            } else {
                kafkaProcess.stopBroker(Duration.ofSeconds(3)); // a throw-away broker: no long controlled shutdown
                kafkaProcess.deleteDirectory();
            }
        } catch (RuntimeException | IOException ignored) {
            // best effort at JVM exit
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static EmbeddedPostgres startPostgres(Path data, int port) throws IOException {
        EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder();
        // PostgreSQL's own default (128MB) unless asked: the big-table benchmark measures with a server's size too
        String sharedBuffers = System.getProperty("embedded.postgres.shared-buffers", "").strip();
        if (!sharedBuffers.isEmpty()) {
            builder.setServerConfig("shared_buffers", sharedBuffers);
        }
        return builder
                .setDataDirectory(data)
                .setCleanDataDirectory(false)
                .setPort(port)
                .setRegisterShutdownHook(false) // ours stops it, after the contexts (pg_ctl already detaches it)
                .setServerConfig("max_connections", "300")
                .setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on")
                // the server's own log reaches this JVM's output (zonky forwards it): without DETAIL lines
                // ("Failing row contains (…)") it holds no row values, as a production server should be set up
                .setServerConfig("log_error_verbosity", "terse")
                .start();
    }

    private static RedisProcess startRedis(int port) throws IOException {
        return RedisProcess.start(port);
    }

    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
