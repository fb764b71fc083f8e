package com.hospital.surveyinbox;

import com.hospital.surveyinbox.support.EmbeddedServices;
import com.hospital.surveyinbox.support.ServiceClient;
import com.hospital.surveyinbox.support.Stopped;
import com.hospital.surveyinbox.support.Tools;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Ctrl-C on the local run ({@code mvn spring-boot:test-run}): the terminal sends SIGINT to its whole
 * foreground process group — the service JVM and every child that shares the group. The local run is
 * started here as a terminal would (a process group of its own, {@code setsid}), and interrupted the same
 * way ({@code kill -INT -pgid}) while messages are being registered. It must stop the service before PostgreSQL, Kafka and Redis, so nothing
 * logs a warning or a stack trace on the way out, exit by itself, and leave no service process behind.
 */
// a terminal's process group and /proc: Linux (the local run itself also starts without setsid elsewhere)
@org.junit.jupiter.api.condition.EnabledOnOs(org.junit.jupiter.api.condition.OS.LINUX)
class LocalRunShutdownTest {

    private static final Pattern PORT = Pattern.compile("localhost:(\\d+)");
    private static final Pattern TEMP_FOLDER = Pattern.compile("/[^\\s='\"]*/(survey-inbox-pg|kafka-process)[^/\\s'\"]*");

    @Test
    void ctrlCStopsTheServiceFirstAndLeavesNothingRunning() throws Exception {
        Path log = Files.createTempFile("local-run", ".log");
        Process run = startLocalRun(log);
        try {
            awaitBanner(run, log);
            String banner = Files.readString(log);
            int postgres = port(banner, "postgres");
            int kafka = port(banner, "kafka");
            int redis = port(banner, "redis");
            int http = port(banner, "reception");
            int bannerEnd = banner.length();

            // Ctrl-C while messages are being registered (the realistic latency model: ~1.5 s each)
            ServiceClient client = new ServiceClient("http://localhost:" + http, "http://localhost:" + http);
            String auth = ServiceClient.basic(LocalRun.LEGACY_USER, LocalRun.LEGACY_PASSWORD);
            for (int i = 0; i < 8; i++) {
                var reply = client.post("/legacy/survey-send-info", ServiceClient.message("LOCALRUN-" + i, null)
                        .getBytes(StandardCharsets.UTF_8), "application/json", auth, Map.of());
                assertThat(reply.status()).as(reply.body()).isEqualTo(200);
            }
            String jdbc = "jdbc:postgresql://localhost:" + postgres + "/" + EmbeddedServices.DB_NAME;
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
                try (Connection c = DriverManager.getConnection(jdbc, EmbeddedServices.DB_USER, "");
                        ResultSet rs = c.createStatement().executeQuery(
                                "SELECT count(*) FROM inbox_message WHERE status = 'PROCESSING'")) {
                    return rs.next() && rs.getInt(1) > 0;
                }
            });

            // the services Ctrl-C must not reach are outside the terminal's process group: the service stops them
            List<ProcessHandle> redisServers = ProcessHandle.of(run.pid()).orElseThrow().descendants()
                    .filter(p -> p.info().command().orElse("").contains("redis-server")).toList();
            assertThat(redisServers).as("redis-server among the local run's processes").isNotEmpty();
            for (ProcessHandle server : redisServers) {
                assertThat(processGroup(server.pid())).as("redis-server's process group").isNotEqualTo(run.pid());
            }

            long signalled = System.nanoTime();
            Process interrupt = new ProcessBuilder("kill", "-INT", "--", "-" + run.pid()).inheritIO().start();
            assertThat(interrupt.waitFor()).isZero();
            assertThat(run.waitFor(60, TimeUnit.SECONDS)).as("the local run exits by itself after Ctrl-C").isTrue();
            long exitMillis = (System.nanoTime() - signalled) / 1_000_000;

            String shutdown = Files.readString(log).substring(bannerEnd);
            System.out.printf("local run: exited %d ms after SIGINT; shutdown log:%n%s%n", exitMillis, shutdown);
            assertThat(shutdown.lines().filter(line -> line.contains(" WARN ") || line.contains(" ERROR ")
                    || line.contains("Exception") || line.startsWith("\tat ")))
                    .as("nothing warns or fails on the way out").isEmpty();
            assertThat(shutdown).contains("Apache Camel").contains("shutdown in")
                    .contains("embedded services: contexts closed");
            for (int port : List.of(postgres, kafka, redis)) {
                assertThat(Stopped.listening(port)).as("nothing listens on %d after exit", port).isFalse();
            }
        } finally {
            if (run.isAlive()) {
                // an assertion failed before Ctrl-C: stop it as a user would, so it stops the services it started in
                // sessions of their own (a SIGKILL of its group alone would leave them running)
                new ProcessBuilder("kill", "-INT", "--", "-" + run.pid()).start().waitFor();
                if (!run.waitFor(60, TimeUnit.SECONDS)) {
                    new ProcessBuilder("kill", "-KILL", "--", "-" + run.pid()).start().waitFor();
                }
            }
        }
    }

    /**
     * A local run killed hard (SIGKILL, the OOM killer, a crashed IDE) runs no shutdown hook: its orphan watcher
     * stops the PostgreSQL, broker and redis-server it started, within seconds.
     */
    @Test
    void aKilledLocalRunLeavesNoServiceRunning() throws Exception {
        Path log = Files.createTempFile("local-run-killed", ".log");
        Process run = startLocalRun(log);
        List<ProcessHandle> started = new ArrayList<>();
        try {
            awaitBanner(run, log);
            String banner = Files.readString(log);
            List<Integer> ports = List.of(port(banner, "postgres"), port(banner, "kafka"), port(banner, "redis"));
            ProcessHandle.of(run.pid()).orElseThrow().descendants().forEach(started::add);
            assertThat(ports).allSatisfy(p -> assertThat(Stopped.listening(p)).as("listening on %d", p).isTrue());
            // the database's and the broker's temporary folders, as their command lines name them
            List<Path> folders = started.stream().flatMap(h -> h.info().arguments().stream().flatMap(java.util.Arrays::stream))
                    .flatMap(argument -> TEMP_FOLDER.matcher(argument).results()).map(m -> Path.of(m.group())).distinct().toList();
            assertThat(folders).as("temporary folders of PostgreSQL and the broker").hasSizeGreaterThanOrEqualTo(2)
                    .allSatisfy(f -> assertThat(f).isDirectory());

            new ProcessBuilder("kill", "-KILL", Long.toString(run.pid())).inheritIO().start().waitFor(); // the JVM only
            assertThat(run.waitFor(10, TimeUnit.SECONDS)).isTrue();

            Stopped.awaitGone(ports, started, "the local run's processes");
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).untilAsserted(() ->
                    assertThat(folders).as("temporary folders removed").allSatisfy(f -> assertThat(f).doesNotExist()));
        } finally {
            if (run.isAlive()) {
                new ProcessBuilder("kill", "-INT", "--", "-" + run.pid()).start().waitFor();
                run.waitFor(60, TimeUnit.SECONDS);
            }
            started.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        }
    }

    /** The local run as a terminal starts it: a process group (session) of its own, free ports. */
    private static Process startLocalRun(Path log) throws IOException {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        // SIGINT as a terminal leaves it: a suite started in the background of a non-interactive shell (a CI runner's
        // "cmd &", nohup) has SIGINT ignored, every child inherits that, and a JVM keeps a shutdown signal it finds
        // ignored: the Ctrl-C below did nothing and the test failed for the way it was started
        List<String> command = new ArrayList<>(List.of("env", "--default-signal=INT", Tools.setsid().orElseThrow().toString(),
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m"));
        // what is tested is the way out, not the JIT: with the quick-start options of the suite's other service JVMs
        // (C1 only, serial collector, small stacks), where mvn spring-boot:test-run takes the JVM's defaults
        command.addAll(com.hospital.surveyinbox.support.ServiceJvm.QUICK_START);
        command.addAll(List.of("-Dlocal.simulator.port=0", "-cp", classpath));
        // ends with this JVM if it is killed mid-test (its own watcher then stops PostgreSQL, the broker and Redis)
        command.addAll(com.hospital.surveyinbox.support.EndsWithParent.withThisJvm(LocalRun.class.getName()));
        command.addAll(List.of("--server.port=0", "--management.server.port=0"));
        return new ProcessBuilder(command).directory(new File(".")).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
    }

    private static void awaitBanner(Process run, Path log) {
        await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(500)).until(() -> {
            assertThat(run.isAlive()).as("local run exited early:%n%s", Files.readString(log)).isTrue();
            return Files.readString(log).contains("(local run) ====");
        });
    }

    private static int port(String banner, String service) {
        String line = banner.lines().filter(l -> l.trim().startsWith(service + " ")).findFirst()
                .orElseThrow(() -> new AssertionError("no " + service + " line in the banner:\n" + banner));
        Matcher m = PORT.matcher(line);
        assertThat(m.find()).as(line).isTrue();
        return Integer.parseInt(m.group(1));
    }

    /** Field 5 of /proc/pid/stat: the process group id. */
    private static long processGroup(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        return Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[2]);
    }
}
