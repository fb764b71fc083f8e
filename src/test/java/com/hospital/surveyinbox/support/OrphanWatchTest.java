package com.hospital.surveyinbox.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A test JVM killed hard (an IDE's stop button sends SIGKILL, so does a CI timeout) stops the embedded services it
 * started, also those it restarted (as FaultToleranceTest restarts PostgreSQL and Redis). Found after a suite's JVM
 * was killed: only the local run had an orphan watcher, and it knew only the first pids, so PostgreSQL and
 * redis-server were left running with their folders.
 */
class OrphanWatchTest {

    private static final Pattern READY = Pattern.compile("RESTARTED postgres=(\\d+) redis=(\\d+) pids=(\\d+),(\\d+)");

    @Test
    void servicesRestartedBeforeTheJvmIsKilledAreStoppedToo() throws Exception {
        Path log = Files.createTempFile("orphan-watch", ".log");
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-cp", classpath, java.nio.file.Path.of(OrphanWatchTest.class.getResource("/orphan-watch/RestartThenWait.java").toURI()).toString())
                .directory(new File(".")).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        List<ProcessHandle> started = new ArrayList<>();
        try {
            await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(250)).until(() -> {
                assertThat(child.isAlive()).as("child exited early:%n%s", Files.readString(log)).isTrue();
                return READY.matcher(Files.readString(log)).find();
            });
            Matcher ready = READY.matcher(Files.readString(log));
            assertThat(ready.find()).isTrue();
            List<Integer> ports = List.of(Integer.parseInt(ready.group(1)), Integer.parseInt(ready.group(2)));
            // the restarted PostgreSQL (postmaster) and redis-server
            for (int pid = 3; pid <= 4; pid++) {
                started.add(ProcessHandle.of(Long.parseLong(ready.group(pid))).orElseThrow());
            }
            assertThat(ports).allSatisfy(p -> assertThat(Stopped.listening(p)).as("listening on %d", p).isTrue());

            child.destroyForcibly(); // SIGKILL: no shutdown hook
            assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();

            Stopped.awaitGone(ports, started, "the restarted services");
        } finally {
            child.destroyForcibly();
            started.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        }
    }
}
