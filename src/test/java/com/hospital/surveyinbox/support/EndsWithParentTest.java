package com.hospital.surveyinbox.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A JVM the tests start (a pod, a second instance, the benchmarked service, the broker) ends when the JVM that started
 * it is killed hard (a CI timeout's SIGKILL): they were left running, pods retrying a database that was gone and a
 * broker holding its port, for the next run on the machine to meet.
 */
class EndsWithParentTest {

    private static final Pattern CHILD = Pattern.compile("CHILD (\\d+)");

    /** A JVM that starts one as the tests do, says its pid, and waits to be killed. */
    public static final class Starter {
        public static void main(String[] args) throws Exception {
            ServiceJvm child = ServiceJvm.start("ends-with-parent-child", List.of("-Xmx64m"), Idle.class.getName(), Map.of());
            System.out.println("CHILD " + child.pid());
            System.out.flush();
            new java.util.concurrent.CountDownLatch(1).await();
        }
    }

    /** The started JVM: does nothing until it ends. */
    public static final class Idle {
        public static void main(String[] args) throws Exception {
            new java.util.concurrent.CountDownLatch(1).await();
        }
    }

    @Test
    void aJvmStartedByTheTestsEndsWhenItsStarterIsKilled() throws Exception {
        Path log = Files.createTempFile("ends-with-parent", ".log");
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process starter = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx64m",
                "-cp", classpath, Starter.class.getName())
                .directory(new File(".")).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        ProcessHandle child = null;
        try {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
                assertThat(starter.isAlive()).as("starter exited early:%n%s", Files.readString(log)).isTrue();
                return CHILD.matcher(Files.readString(log)).find();
            });
            Matcher pid = CHILD.matcher(Files.readString(log));
            assertThat(pid.find()).isTrue();
            child = ProcessHandle.of(Long.parseLong(pid.group(1))).orElseThrow();
            assertThat(child.isAlive()).isTrue();

            starter.destroyForcibly(); // SIGKILL: no shutdown hook, no @AfterAll
            assertThat(starter.waitFor(10, TimeUnit.SECONDS)).isTrue();

            ProcessHandle started = child;
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> !started.isAlive());
        } finally {
            starter.destroyForcibly();
            if (child != null) {
                child.destroyForcibly();
            }
            Files.deleteIfExists(log);
        }
    }
}
