package com.hospital.surveyinbox.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.util.List;

/** Checks that services a killed JVM started are gone: their ports closed and their processes ended. */
public final class Stopped {

    private Stopped() {
    }

    public static boolean listening(int port) {
        try (Socket ignored = new Socket("localhost", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Within 30 s nothing listens on {@code ports} and none of {@code processes} is alive. */
    public static void awaitGone(List<Integer> ports, List<ProcessHandle> processes, String what) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).untilAsserted(() ->
                assertThat(ports).allSatisfy(p -> assertThat(listening(p)).as("nothing listens on %d", p).isFalse()));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).untilAsserted(() ->
                assertThat(processes.stream().filter(ProcessHandle::isAlive).map(h -> h.info().commandLine().orElse("?")))
                        .as(what).isEmpty());
    }
}
