package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * The workers shared by all consumers ({@code inboxProcessPool}, {@code adapter.kafka.workers}): one
 * consumer on one partition keeps every worker busy, waits for a free one instead of queueing, and rows
 * of one subject handed to two workers at once are still registered in arrival order. Real Kafka,
 * PostgreSQL and simulator; a gate in the simulator holds chosen patient lookups until released.
 */
@TestPropertySource(properties = {
        "adapter.kafka.topic=workers-tests",
        "adapter.kafka.group-id=workers-tests",
        "adapter.kafka.partitions=1",
        "adapter.kafka.consumers=1",
        "adapter.kafka.workers=3",
        // the gate holds a lookup for as long as the test needs
        "adapter.http.response-timeout=PT30S"})
class ProcessingWorkersTest extends IntegrationTest {

    @Autowired
    MeterRegistry meters;

    @Autowired
    ProcessingWorkers mainWorkers;

    /** Holds every patient lookup whose patno starts with the prefix until {@link #open()}; counts them. */
    private static final class Gate {
        final AtomicInteger waiting = new AtomicInteger();
        final AtomicInteger mostAtOnce = new AtomicInteger();
        final CountDownLatch released = new CountDownLatch(1);
        final DownstreamSimulator.Fault fault;

        Gate(String patnoPrefix) {
            fault = simulator().add(new DownstreamSimulator.Fault(key -> {
                if (key.startsWith("GET /legacy/patients/" + patnoPrefix)) {
                    mostAtOnce.accumulateAndGet(waiting.incrementAndGet(), Math::max);
                    try {
                        released.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    waiting.decrementAndGet();
                }
                return false; // never a forced answer: the lookup goes on as usual once released
            }, 0, null, 0));
        }

        void open() {
            released.countDown();
        }
    }

    @Test
    void oneConsumerKeepsEveryWorkerBusyAndWaitsForAFreeOne() {
        String run = uniqueSubject("WRK");
        Gate gate = new Gate("GATE" + run);
        List<String> ids = new ArrayList<>();
        try {
            for (int i = 0; i < 5; i++) {
                ids.add(client.accept(ServiceClient.message(run + "-" + i, "GATE" + run + "-" + i, "")));
            }
            // one consumer, one partition: with one record at a time per consumer only one lookup could wait here
            await().atMost(Duration.ofSeconds(30)).until(() -> gate.waiting.get() == 3);
            assertThat(meters.get("adapter.processing.workers.busy").gauge().value()).isEqualTo(3.0);
            // every worker is taken: the consumer holds the fourth record until one is free, the fifth waits in
            // Kafka, and neither is claimed by anyone while the gate holds (watched for 2 s, not read once)
            await().atMost(Duration.ofSeconds(30)).until(() -> mainWorkers.waitingForWorker() == 1);
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).until(
                    () -> ids.stream().filter(id -> !"RECEIVED".equals(rows.status(id))).count() == 3);
        } finally {
            gate.open();
        }
        ids.forEach(id -> rows.awaitStatus(id, "COMPLETED"));
        assertThat(gate.mostAtOnce.get()).as("never more registrations at once than workers").isEqualTo(3);
        await().atMost(Duration.ofSeconds(10)).until(() -> meters.get("adapter.processing.workers.busy").gauge().value() == 0.0);
    }

    @Test
    void rowsOfOneSubjectHandedToTwoWorkersRegisterInArrivalOrder() {
        String subject = uniqueSubject("WRK-ORD");
        String first = "GATE" + subject + "-first";
        String second = "P" + subject + "-second";
        Gate gate = new Gate(first);
        String firstId;
        String secondId;
        try {
            firstId = client.accept(ServiceClient.message(subject, first, ""));
            await().atMost(Duration.ofSeconds(30)).until(() -> gate.waiting.get() == 1);
            secondId = client.accept(ServiceClient.message(subject, second, ""));
            // a free worker took the second row at once: the claim's ordering guard held it behind the first
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    rows.row(secondId).get("held_reason") != null);
            assertThat(rows.status(secondId)).isEqualTo("RECEIVED");
            assertThat(simulator().events(second)).as("nothing of the second row reached downstream").isEmpty();
        } finally {
            gate.open();
        }
        rows.awaitStatus(firstId, "COMPLETED");
        rows.awaitStatus(secondId, "COMPLETED");
        // the second row's only attempt began after the first row's attempt had ended
        assertThat(jdbc.queryForObject("""
                SELECT bool_and(s.started_at >= f.finished_at) AND count(*) = 1
                  FROM inbox_attempt s, inbox_attempt f
                 WHERE s.inbox_id = ? AND f.inbox_id = ?""", Boolean.class, Long.parseLong(secondId), Long.parseLong(firstId)))
                .isTrue();
    }
    /**
     * A rollout's stop: Camel waits for the row in flight, but its suspended consumer still hands over the rest of
     * what it polled, and a row a worker started during that wait was cut off at the deadline (PROCESSING for
     * stuck-processing-after, an attempt charged). Stopping, the workers start nothing more: those rows stay as
     * they were, their offsets uncommitted, and the partition's next owner reads them again once this instance has
     * left the group (committed, they waited for the redelivery job: lost-event-after and a tick).
     */
    @Test
    void aStoppingInstanceStartsNoMoreRowsAndItsPartitionsNextOwnerTakesThem() throws Exception {
        String run = uniqueSubject("WRK-STOP");
        Gate inFlight = new Gate("GATE" + run + "-inflight");
        Gate late = new Gate("GATE" + run + "-late"); // holds a row started during the stop until after it
        java.util.Map<String, String> instance = java.util.Map.of("adapter.kafka.topic", "workers-stop-tests",
                "adapter.kafka.group-id", "workers-stop-tests", "spring.quartz.scheduler-name", "workers-stop-tests",
                "adapter.kafka.partitions", "1", "adapter.kafka.consumers", "1", "adapter.kafka.workers", "1",
                "adapter.http.response-timeout", "PT30S", "camel.main.shutdown-timeout", "10");
        org.springframework.context.ConfigurableApplicationContext stopping = com.hospital.surveyinbox.support.SecondInstance.start(instance);
        java.util.concurrent.CompletableFuture<Void> closed = null;
        String first;
        List<String> rest = new ArrayList<>();
        try {
            ServiceClient other = new ServiceClient("http://localhost:" + stopping.getEnvironment().getProperty("local.server.port"),
                    "http://localhost:" + stopping.getEnvironment().getProperty("local.management.port"));
            first = other.accept(ServiceClient.message(run + "-0", "GATE" + run + "-inflight", ""));
            await().atMost(Duration.ofSeconds(30)).until(() -> inFlight.waiting.get() == 1);
            for (int i = 1; i <= 2; i++) {
                rest.add(other.accept(ServiceClient.message(run + "-" + i, "GATE" + run + "-late-" + i, "")));
            }
            ProcessingWorkers workers = stopping.getBean(ProcessingWorkers.class);
            // the consumer holds the late rows already and waits for the busy worker: else the stop could begin before
            // they were polled, and "nothing started during the stop" would hold with nothing to start
            await().atMost(Duration.ofSeconds(30)).until(() -> workers.waitingForWorker() == 1);
            closed = java.util.concurrent.CompletableFuture.runAsync(stopping::close);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(workers::isStopping);
            inFlight.open(); // the row in flight finishes inside the shutdown's wait, and its worker is free again

            closed.get(60, TimeUnit.SECONDS);
        } finally {
            inFlight.open();
            late.open();
            if (closed == null) {
                stopping.close();
            }
        }
        assertThat(rows.status(first)).isEqualTo("COMPLETED");
        assertThat(late.mostAtOnce.get()).as("rows started during the stop").isZero();
        for (String id : rest) {
            assertThat(rows.status(id)).as(id).isEqualTo("RECEIVED");
            assertThat(rows.attempts(id)).as(id).isZero();
        }
        // the next owner of the partition (no redelivery job runs here) takes them from the uncommitted offset
        org.springframework.context.ConfigurableApplicationContext next = com.hospital.surveyinbox.support.SecondInstance.start(instance);
        try {
            for (String id : rest) {
                rows.awaitStatus(id, "COMPLETED", Duration.ofSeconds(60));
            }
        } finally {
            next.close();
        }
    }
}
