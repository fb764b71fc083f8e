package com.hospital.surveyinbox.support;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import redis.embedded.RedisServer;

/**
 * Real PostgreSQL 17, a real KRaft Kafka broker, a real redis-server and the downstream simulator, started
 * once per JVM and shared by every Spring context of the run. Stopped by one shutdown hook that first
 * closes the tracked contexts, so no consumer logs errors against a vanished broker.
 */
public final class EmbeddedServices {

    public static final String DB_NAME = "inbox";
    public static final String DB_USER = "postgres";

    private static EmbeddedServices instance;

    private final Path pgData;
    private final int pgPort;
    private volatile EmbeddedPostgres postgres;
    private final EmbeddedKafkaKraftBroker kafka;
    private final int redisPort;
    private volatile RedisServer redis;
    private final DownstreamSimulator simulator;
    private final List<ConfigurableApplicationContext> contexts = new CopyOnWriteArrayList<>();

    private EmbeddedServices(boolean withSimulator, int simulatorPort) {
        try {
            pgData = Files.createTempDirectory("survey-inbox-pg");
            pgPort = freePort();
            postgres = startPostgres(pgData, pgPort);
            try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE DATABASE " + DB_NAME);
            }
            kafka = new EmbeddedKafkaKraftBroker(1, 1);
            kafka.brokerProperties(Map.of("auto.create.topics.enable", "true", "log.dir",
                    Files.createTempDirectory("survey-inbox-kafka").toString()));
            kafka.afterPropertiesSet();
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
        }
        return instance;
    }

    /** The local run: simulator on a fixed port with the realistic latency model, unless base URLs are given. */
    public static synchronized EmbeddedServices startForLocalRun(boolean withSimulator, int simulatorPort) {
        if (instance == null) {
            instance = new EmbeddedServices(withSimulator, simulatorPort);
        }
        return instance;
    }

    /** Spring properties that point the service at these services. */
    public Map<String, Object> properties() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("spring.datasource.url", jdbcUrl());
        p.put("spring.datasource.username", DB_USER);
        p.put("spring.datasource.password", "");
        p.put("spring.kafka.bootstrap-servers", kafka.getBrokersAsString());
        p.put("camel.component.kafka.brokers", kafka.getBrokersAsString());
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
        return kafka.getBrokersAsString();
    }

    public DownstreamSimulator simulator() {
        return simulator;
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
    }

    /** Starts PostgreSQL again on the same port and data directory. */
    public synchronized void startPostgres() {
        try {
            postgres = startPostgres(pgData, pgPort);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public synchronized void stopRedis() {
        try {
            redis.stop();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public synchronized void startRedis() {
        try {
            redis = startRedis(redisPort);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void track(ConfigurableApplicationContext context) {
        contexts.add(context);
    }

    private void shutdown() {
        for (ConfigurableApplicationContext context : contexts) {
            try {
                context.close();
            } catch (RuntimeException ignored) {
                // closing anyway
            }
        }
        if (simulator != null) {
            simulator.stop();
        }
        try {
            kafka.destroy();
        } catch (RuntimeException ignored) {
            // best effort at JVM exit
        }
        try {
            redis.stop();
        } catch (IOException | RuntimeException ignored) {
            // best effort at JVM exit
        }
        try {
            postgres.close();
        } catch (IOException | RuntimeException ignored) {
            // best effort at JVM exit
        }
    }

    private static EmbeddedPostgres startPostgres(Path data, int port) throws IOException {
        return EmbeddedPostgres.builder()
                .setDataDirectory(data)
                .setCleanDataDirectory(false)
                .setPort(port)
                .setServerConfig("max_connections", "300")
                .setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on")
                .start();
    }

    private static RedisServer startRedis(int port) throws IOException {
        RedisServer server = RedisServer.newRedisServer().port(port).setting("bind 127.0.0.1").setting("save \"\"")
                .setting("appendonly no").build();
        server.start();
        return server;
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
