package com.hospital.surveyinbox.fault;

import com.hospital.surveyinbox.support.EmbeddedServicesInitializer;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.KafkaProcess;
import com.hospital.surveyinbox.support.LoadSender;
import com.hospital.surveyinbox.support.ServiceClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Kafka broker of this class's own, with ACLs enforced. Stopped (SIGTERM, as an operator or a node drain would)
 * and started again on the same data while the legacy system keeps sending: reception does not depend on Kafka, so
 * every message is still acknowledged; events that could not be published during the outage are republished from
 * the inbox by the redelivery job; every acknowledged row ends COMPLETED, none twice. And refusing this service's
 * reads for a while: the consumers it ended are restarted once it accepts again.
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
        "adapter.reception.rate-limit.enabled=false",
        "adapter.kafka.watch-period-ms=1000"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class KafkaRestartTest extends IntegrationTest {

    @Autowired
    MeterRegistry meters;

    static KafkaProcess kafka;

    @BeforeAll
    static void ownBroker() throws Exception {
        // ACLs enforced (KRaft's own authorizer), everything allowed where none is set: a test can take one right away
        kafka = KafkaProcess.start(List.of("authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "allow.everyone.if.no.acl.found=true"));
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
        // two senders (20 a second): the outage's backlog drains through the redelivery job's paced republishing
        LoadSender load = new LoadSender(client, prefix, 2);
        try { // a failed wait must not leave its senders posting through the rest of the class
            await().atMost(Duration.ofSeconds(60)).until(() -> rows.count(prefix, "COMPLETED") >= 20);

            double notPublished = meters.get(com.hospital.surveyinbox.inbox.InboxEventPublisher.PUBLISH_FAILURES).counter().count();
            kafka.stopBroker();
            long stopped = System.nanoTime();
            long restarted;
            try {
                // reception keeps acknowledging: the inbox, not Kafka, is what a 200 promises
                await().atMost(Duration.ofSeconds(60)).until(() ->
                        load.answers().stream().filter(a -> a.sentAt() > stopped && a.status() == 200).count() >= 30);
                // and down long enough that acknowledged rows' events are given up (max-block, the delivery timeout): those
                // rows reach the consumers through the redelivery job only
                await().atMost(Duration.ofSeconds(60)).until(() -> meters.get(
                        com.hospital.surveyinbox.inbox.InboxEventPublisher.PUBLISH_FAILURES).counter().count() > notPublished);
            } finally {
                kafka.startBroker();
                restarted = System.nanoTime();
            }
            await().atMost(Duration.ofSeconds(60)).until(() ->
                    load.answers().stream().filter(a -> a.sentAt() > restarted && a.status() == 200).count() >= 20);
        } finally {
            load.close();
        }

        assertThat(load.answers()).as("no reception failed because the broker was down").allSatisfy(a -> assertThat(a.status()).isEqualTo(200));
        assertThat(rows.ids(prefix)).containsExactlyInAnyOrderElementsOf(load.acknowledged.values());
        long acknowledged = load.acknowledged.size();
        rows.awaitAllClosed(prefix, acknowledged, Duration.ofMinutes(3));
        assertThat(rows.count(prefix, "COMPLETED")).isEqualTo(acknowledged);
        assertNoBundleTwice(load.attempted);
    }

    /**
     * The broker stops letting this service read its topic (an ACL changed under running pods): Camel's consumer
     * ends each thread for good on the TopicAuthorizationException, and nothing would be processed again until the
     * pods restart. The watch (inbox-process-watch) counts them and restarts the consumer route, backing off while
     * the refusal lasts; once the broker lets it read again, a restart brings the consumers back and the row stored
     * meanwhile completes, no pod restarted.
     */
    @Test
    void consumerThreadsTheBrokersRefusalEndedAreRestartedOnceItAcceptsAgain() throws Exception {
        ResourcePattern topic = new ResourcePattern(ResourceType.TOPIC, "kafka-restart", PatternType.LITERAL);
        AclBinding allowAll = new AclBinding(topic, new AccessControlEntry("User:*", "*", AclOperation.ALL, AclPermissionType.ALLOW));
        AclBinding denyRead = new AclBinding(topic, new AccessControlEntry("User:*", "*", AclOperation.READ, AclPermissionType.DENY));
        String id;
        // every consumer thread running first: threads the broker's stop ended in the test before (restarted by the
        // watch with its back-off) made "ended > 0" below true before the refusal was in force, and a consumer still
        // reading completed the row (a flake on a clean clone)
        await().atMost(Duration.ofSeconds(60)).until(() ->
                meters.get("adapter.kafka.consumer.threads.ended").gauge().value() == 0);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            double restarts = meters.get("adapter.kafka.consumer.restarts").counter().count();
            // writing (the receptions' events) and describing stay allowed; reading is refused
            admin.createAcls(List.of(allowAll, denyRead)).all().get(30, TimeUnit.SECONDS);
            try {
                // the row is stored once the watch restarted the route for the refusal: every consumer is then one
                // created under the ACL (storing it when the first thread ended let another, its fetch authorised
                // before the ACL and still waiting for records, return it: a flake on a clean clone)
                await().atMost(Duration.ofSeconds(60)).until(() ->
                        meters.get("adapter.kafka.consumer.restarts").counter().count() >= restarts + 1);
                id = client.accept(ServiceClient.message(uniqueSubject("ACL"), ""));
                // restarted again while still refused: the consumers that could have read the row ended too
                await().atMost(Duration.ofSeconds(60)).until(() ->
                        meters.get("adapter.kafka.consumer.restarts").counter().count() >= restarts + 2);
                assertThat(rows.status(id)).as("a row stored while reading is refused").isNotEqualTo("COMPLETED");
            } finally {
                admin.deleteAcls(List.of(denyRead.toFilter(), allowAll.toFilter())).all()
                        .get(30, TimeUnit.SECONDS);
            }
        }
        rows.awaitStatus(id, "COMPLETED", Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(30)).until(() ->
                meters.get("adapter.kafka.consumer.threads.ended").gauge().value() == 0);
    }
}
