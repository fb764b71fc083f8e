package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A consumer never waits for a worker without bound: with every worker held (slow downstreams), a hand-off
 * is refused after the wait, so the consumer returns to poll() before max.poll.interval.ms.
 */
class ProcessingWorkersHandOffTest {

    @Test
    void aHandOffIsRefusedWhenNoWorkerFreesUpInTimeAndAcceptedOnceOneDoes() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ProcessingWorkers workers = new ProcessingWorkers(1, Duration.ofMillis(200), meters);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        try {
            workers.execute(() -> {
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                ran.incrementAndGet();
            });

            assertThatThrownBy(() -> workers.execute(ran::incrementAndGet)).isInstanceOf(RejectedExecutionException.class)
                    .hasMessageContaining("redelivery job");
            assertThat(meters.get("adapter.processing.handoffs.refused").counter().count()).isEqualTo(1);

            release.countDown();
            workers.execute(ran::incrementAndGet);
            await().atMost(Duration.ofSeconds(10)).until(() -> ran.get() == 2);
        } finally {
            release.countDown();
            workers.shutdownNow();
        }
    }

    @Test
    void eachRowStartsWithoutThePreviousRowsLogContextAndAStoppingPoolStartsNothing() throws Exception {
        // a row's steps may continue on another thread (a Kafka producer's callback), which then clears the MDC there:
        // the worker's own copy of the row's keys must not tag the next row's lines
        ProcessingWorkers workers = new ProcessingWorkers(1, Duration.ofSeconds(5), new SimpleMeterRegistry());
        java.util.concurrent.atomic.AtomicReference<String> seen = new java.util.concurrent.atomic.AtomicReference<>("unset");
        CountDownLatch done = new CountDownLatch(1);
        java.util.Set<Thread> ranOn = java.util.concurrent.ConcurrentHashMap.newKeySet();
        try {
            workers.execute(() -> {
                ranOn.add(Thread.currentThread());
                org.slf4j.MDC.put("srvyDrawupNo", "A-previous");
            });
            workers.execute(() -> {
                ranOn.add(Thread.currentThread());
                seen.set(org.slf4j.MDC.get("srvyDrawupNo"));
                done.countDown();
            });
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
            // on the one worker's thread both: the second row met the thread the first left its keys on
            assertThat(ranOn).hasSize(1);
            assertThat(seen.get()).isNull();

            workers.stopTakingWork();
            assertThatThrownBy(() -> workers.execute(() -> seen.set("started"))).isInstanceOf(WorkersStoppingException.class);
            assertThat(seen.get()).isNull();
            workers.takeWork(); // Camel started again
            CountDownLatch again = new CountDownLatch(1);
            workers.execute(again::countDown);
            assertThat(again.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            workers.shutdownNow();
        }
    }

    @Test
    void aConsumerWaitingForAWorkerWhenTheStopBeginsIsRefusedAsStoppingNotAsARefusedHandOff() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ProcessingWorkers workers = new ProcessingWorkers(1, Duration.ofSeconds(3), meters);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        try {
            workers.execute(() -> {
                running.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
            java.util.concurrent.CompletableFuture<Void> waiting =
                    java.util.concurrent.CompletableFuture.runAsync(() -> workers.execute(() -> { }));
            await().atMost(Duration.ofSeconds(10)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10))
                    .until(() -> workers.waitingForWorker() == 1);
            workers.stopTakingWork();

            // the stop (logged at INFO by the route), not "no free worker" (an ERROR, a refused hand-off counted)
            assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(WorkersStoppingException.class);
            assertThat(meters.get("adapter.processing.handoffs.refused").counter().count()).isZero();
        } finally {
            release.countDown();
            workers.shutdownNow();
        }
    }

    @Test
    void theDefaultWaitKeepsAWholePollWithinHalfTheMaxPollInterval() {
        com.hospital.surveyinbox.config.AdapterProperties properties =
                com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of());
        var kafka = properties.getKafka();
        assertThat(kafka.getHandOffWait().multipliedBy(kafka.getMaxPollRecords()))
                .isLessThanOrEqualTo(Duration.ofMillis(kafka.getMaxPollIntervalMs() / 2));
    }
}
