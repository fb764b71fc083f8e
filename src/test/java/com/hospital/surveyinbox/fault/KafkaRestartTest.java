package com.hospital.surveyinbox.fault;

import com.hospital.surveyinbox.support.EmbeddedServicesInitializer;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.KafkaProcess;
import com.hospital.surveyinbox.support.LoadSender;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Kafka broker stopped (SIGTERM, as an operator or a node drain would) and started again on the same
 * data while the legacy system keeps sending. Reception does not depend on Kafka, so every message is
 * still acknowledged; events that could not be published during the outage are republished from the
 * inbox by the redelivery job; every acknowledged row ends COMPLETED, none twice.
 */
@TestPropertySource(properties = {
        "adapter.kafka.topic=kafka-restart",
        "adapter.kafka.group-id=kafka-restart",
        "adapter.kafka.consumers=4",
        "adapter.kafka.partitions=8",
        "spring.quartz.scheduler-name=kafka-restart",
        "adapter.inbox.redeliver-enabled=true",
        "adapter.inbox.redeliver-cron=0/1 * * * * ?",
        "adapter.inbox.retry-delay=PT1S",
        "adapter.inbox.lost-event-after=PT3S",
        "adapter.inbox.stuck-processing-after=PT10S",
        "adapter.inbox.max-attempts=8",
        "adapter.reception.rate-limit.enabled=false"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class KafkaRestartTest extends IntegrationTest {

    static KafkaProcess kafka;

    @BeforeAll
    static void ownBroker() throws Exception {
        kafka = KafkaProcess.start();
        System.setProperty(EmbeddedServicesInitializer.KAFKA_OVERRIDE, kafka.bootstrapServers());
    }

    @AfterAll
    static void stopBroker() throws Exception {
        System.clearProperty(EmbeddedServicesInitializer.KAFKA_OVERRIDE);
        if (kafka != null) {
            kafka.close();
        }
    }

    @Test
    void brokerStoppedAndRestartedDuringLoadLosesNothingAcknowledged() throws Exception {
        String prefix = uniqueSubject("KAFKADOWN") + "-";
        LoadSender load = new LoadSender(client, prefix, 4);
        await().atMost(Duration.ofSeconds(60)).until(() -> rows.count(prefix, "COMPLETED") >= 20);

        kafka.stopBroker();
        long stopped = System.nanoTime();
        long restarted;
        try {
            // reception keeps acknowledging: the inbox, not Kafka, is what a 200 promises
            await().atMost(Duration.ofSeconds(60)).until(() ->
                    load.answers().stream().filter(a -> a.sentAt() > stopped && a.status() == 200).count() >= 30);
        } finally {
            kafka.startBroker();
            restarted = System.nanoTime();
        }
        await().atMost(Duration.ofSeconds(60)).until(() ->
                load.answers().stream().filter(a -> a.sentAt() > restarted && a.status() == 200).count() >= 20);
        load.close();

        assertThat(load.answers()).as("no reception failed because the broker was down").allSatisfy(a -> assertThat(a.status()).isEqualTo(200));
        assertThat(rows.ids(prefix)).containsExactlyInAnyOrderElementsOf(load.acknowledged.values());
        long acknowledged = load.acknowledged.size();
        rows.awaitAllClosed(prefix, acknowledged, Duration.ofMinutes(3));
        assertThat(rows.count(prefix, "COMPLETED")).isEqualTo(acknowledged);
        assertNoBundleTwice(load.attempted);
    }
}
