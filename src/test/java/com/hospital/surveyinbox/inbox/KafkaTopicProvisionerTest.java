package com.hospital.surveyinbox.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;

/**
 * The event topic on the real broker: created with the configured partitions; one that exists with fewer (the
 * broker's own default on a first publish, or made by hand) grown to them instead of passing as "exists"; and a
 * broker that could not be reached at the start asked again until the topic is there, without a restart.
 */
class KafkaTopicProvisionerTest extends IntegrationTest {

    @Autowired
    KafkaTopicProvisioner provisioner;

    @Value("${camel.component.kafka.brokers}")
    String brokers;

    @Test
    void aTopicThatExistsWithFewerPartitionsIsGrownAndOneItCreatesHasThemAll() throws Exception {
        String small = "provisioner-small-" + System.nanoTime();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers))) {
            // kept long enough (a shorter retention is said: aTopicKeepingEventsShorterThanARestoreNeedsIsSaid)
            admin.createTopics(List.of(new NewTopic(small, 1, (short) 1).configs(Map.of("retention.ms", "-1"))))
                    .all().get(15, TimeUnit.SECONDS);
            // an existing topic: its metadata known to the broker (a topic made moments ago may not be yet)
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(15)).ignoreExceptions()
                    .until(() -> admin.describeTopics(List.of(small)).allTopicNames().get(5, TimeUnit.SECONDS).containsKey(small));

            assertThat(provisioner.ensure(small, 8, (short) 1)).isEqualTo(new KafkaTopicProvisioner.Check(true, java.util.Optional.empty()));
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(15)).untilAsserted(() -> assertThat(
                    admin.describeTopics(List.of(small)).allTopicNames().get(5, TimeUnit.SECONDS).get(small).partitions()).hasSize(8));
            // fewer replicas than asked for are said (one broker here)
            assertThat(provisioner.ensure(small, 8, (short) 2).problem()).hasValueSatisfying(problem -> assertThat(problem)
                    .contains(small, "exists with 1 replicas", "adapter.kafka.replication-factor (2)"));

            String fresh = "provisioner-fresh-" + System.nanoTime();
            assertThat(provisioner.ensure(fresh, 8, (short) 1).done()).isTrue();
            assertThat(admin.describeTopics(List.of(fresh)).allTopicNames().get(15, TimeUnit.SECONDS).get(fresh).partitions()).hasSize(8);
            // and as it is now: nothing to say
            assertThat(provisioner.ensure(fresh, 8, (short) 1)).isEqualTo(new KafkaTopicProvisioner.Check(true, java.util.Optional.empty()));
        }
    }

    /**
     * The broker cannot be reached when the instance starts (restarted with the rollout, an egress rule not there yet):
     * the check is tried again until it reaches the broker, and the topic is created with its partitions then. It was
     * tried once: the topic never came (broker auto-create off: nothing consumed until a restart) or came with the
     * broker's defaults (one partition: one consumer in the cluster for every row).
     */
    @Test
    void aBrokerAwayAtTheStartGetsItsTopicOnceItIsBack() throws Exception {
        String topic = "provisioner-late-" + System.nanoTime();
        int brokerPort = Integer.parseInt(brokers.substring(brokers.lastIndexOf(':') + 1).split(",")[0]);
        try (com.hospital.surveyinbox.support.FreezableTcpProxy away = new com.hospital.surveyinbox.support.FreezableTcpProxy(brokerPort);
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers))) {
            away.cutOff();
            KafkaTopicProvisioner late = new KafkaTopicProvisioner(com.hospital.surveyinbox.support.TestProperties.bind(Map.of(
                    "adapter.kafka.topic", topic, "adapter.kafka.partitions", "6", "adapter.kafka.consumers", "2")),
                    "127.0.0.1:" + away.port(), java.time.Duration.ofSeconds(1));
            // the health reads the broker directly: it answers, the topic was not checked
            KafkaHealthIndicator health = new KafkaHealthIndicator(brokers, com.hospital.surveyinbox.support.TestProperties.bind(
                    Map.of("adapter.kafka.topic", topic)), late, new org.springframework.mock.env.MockEnvironment());
            try {
                late.afterPropertiesSet();
                assertThat(late.ensured()).isFalse();
                assertThat(admin.listTopics().names().get(15, TimeUnit.SECONDS)).doesNotContain(topic);
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).untilAsserted(() -> {
                    org.springframework.boot.actuate.health.Health seen = health.health();
                    assertThat(seen.getStatus()).isEqualTo(org.springframework.boot.actuate.health.Status.DOWN);
                    assertThat(seen.getDetails()).containsKey("brokers");
                    assertThat(String.valueOf(seen.getDetails().get("topic"))).contains(topic, "not checked yet");
                });

                away.restore();
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).until(late::ensured);
                assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get(15, TimeUnit.SECONDS).get(topic).partitions()).hasSize(6);
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).untilAsserted(() ->
                        assertThat(health.health().getStatus()).isEqualTo(org.springframework.boot.actuate.health.Status.UP));
            } finally {
                late.destroy();
                health.destroy();
            }
        }
    }

    /**
     * The routes' TLS/SASL settings (camel.component.kafka.*) reach the service's own admin clients: told to speak
     * TLS, the topic check and the health speak TLS (to this plain-text broker: nothing answers them). They spoke plain
     * text whatever the routes were given, so against a broker that wants TLS the health stayed DOWN and the topic was
     * never checked, while events flowed.
     */
    @Test
    void theRoutesSecuritySettingsReachTheTopicCheckAndTheHealth() throws Exception {
        org.springframework.mock.env.MockEnvironment tls = new org.springframework.mock.env.MockEnvironment()
                .withProperty("camel.component.kafka.security-protocol", "SSL")
                .withProperty("camel.component.kafka.ssl-endpoint-algorithm", "");
        assertThat(KafkaClientSecurity.of(tls)).containsExactly(java.util.Map.entry("security.protocol", "SSL"));
        // as Camel hands them on: "none" turns hostname checking off, store types in upper case
        assertThat(KafkaClientSecurity.of(new org.springframework.mock.env.MockEnvironment()
                .withProperty("camel.component.kafka.ssl-endpoint-algorithm", "none")
                .withProperty("camel.component.kafka.ssl-truststore-type", "pem")))
                .containsEntry("ssl.endpoint.identification.algorithm", "").containsEntry("ssl.truststore.type", "PEM");
        // a login only additional-properties can name (OAUTHBEARER, a cloud's IAM): the admin clients log in the same way
        assertThat(KafkaClientSecurity.of(new org.springframework.mock.env.MockEnvironment()
                .withProperty("camel.component.kafka.sasl-mechanism", "OAUTHBEARER")
                .withProperty("camel.component.kafka.additional-properties[sasl.login.callback.handler.class]", "com.example.Login")
                .withProperty("camel.component.kafka.additional-properties[sasl.oauthbearer.token.endpoint.url]", "https://idp/token")
                .withProperty("camel.component.kafka.additional-properties[max.poll.records]", "5")))
                .containsEntry("sasl.mechanism", "OAUTHBEARER")
                .containsEntry("sasl.login.callback.handler.class", "com.example.Login")
                .containsEntry("sasl.oauthbearer.token.endpoint.url", "https://idp/token")
                .doesNotContainKey("max.poll.records");
        String topic = "provisioner-tls-" + System.nanoTime();
        KafkaTopicProvisioner overTls = new KafkaTopicProvisioner(com.hospital.surveyinbox.support.TestProperties.bind(Map.of(
                "adapter.kafka.topic", topic)), brokers, java.time.Duration.ofSeconds(1), KafkaClientSecurity.of(tls));
        KafkaHealthIndicator health = new KafkaHealthIndicator(brokers, com.hospital.surveyinbox.support.TestProperties.bind(
                Map.of("adapter.kafka.topic", topic)), provisioner, tls);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers))) {
            assertThat(overTls.ensure(topic, 2, (short) 1).done()).as("a TLS client gets no answer from a plain-text broker").isFalse();
            assertThat(admin.listTopics().names().get(15, TimeUnit.SECONDS)).doesNotContain(topic);
            assertThat(health.health().getStatus()).isEqualTo(org.springframework.boot.actuate.health.Status.DOWN);
        } finally {
            overTls.destroy();
            health.destroy();
        }
    }

    /** Three replicas or more: an acknowledged event is on two of them (one broker here: the request as built). */
    @Test
    void aTopicWithThreeReplicasAcknowledgesOnlyWhatTwoHave() {
        assertThat(KafkaTopicProvisioner.newTopic("t", 8, (short) 3, java.time.Duration.ofDays(14)).configs())
                .containsEntry("min.insync.replicas", "2");
        // two replicas keep the cluster's default (a hardened 2 is reachable)
        assertThat(KafkaTopicProvisioner.newTopic("t", 8, (short) 2, java.time.Duration.ofDays(14)).configs())
                .doesNotContainKey("min.insync.replicas");
    }

    /**
     * A topic of fewer replicas carries its own minimum of 1 on the broker, whatever the cluster's default: a cluster
     * hardened to 2 made a topic of one replica refuse every publish (acks=all: NOT_ENOUGH_REPLICAS), dev's rows
     * answered 200 and never registered.
     */
    @Test
    void aTopicOfOneReplicaSaysItsOwnMinimumOnTheBroker() throws Exception {
        String topic = "provisioner-minimum-" + System.nanoTime();
        assertThat(provisioner.ensure(topic, 2, (short) 1).done()).isTrue();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers))) {
            org.apache.kafka.common.config.ConfigResource resource = new org.apache.kafka.common.config.ConfigResource(
                    org.apache.kafka.common.config.ConfigResource.Type.TOPIC, topic);
            org.apache.kafka.clients.admin.ConfigEntry minimum = admin.describeConfigs(List.of(resource)).all()
                    .get(15, TimeUnit.SECONDS).get(resource).get("min.insync.replicas");
            assertThat(minimum.value()).isEqualTo("1");
            assertThat(minimum.source()).isEqualTo(org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
        }
    }

    /**
     * The topic keeps its events adapter.kafka.retention (P14D): a database restore replays them from before its
     * restore point (docs/operations.md), and the broker's default (7 days, often less) lost them silently. A topic that
     * exists with a shorter retention is said, not altered (the Kafka operator's setting).
     */
    @Test
    void aTopicKeepsItsEventsAsLongAsARestoreNeedsAndAShorterOneIsSaid() throws Exception {
        String created = "provisioner-retention-" + System.nanoTime();
        assertThat(provisioner.ensure(created, 2, (short) 1).done()).isTrue();
        String shorter = "provisioner-short-" + System.nanoTime();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers))) {
            org.apache.kafka.common.config.ConfigResource resource = new org.apache.kafka.common.config.ConfigResource(
                    org.apache.kafka.common.config.ConfigResource.Type.TOPIC, created);
            assertThat(admin.describeConfigs(List.of(resource)).all().get(15, TimeUnit.SECONDS).get(resource)
                    .get("retention.ms").value()).isEqualTo(Long.toString(java.time.Duration.ofDays(14).toMillis()));

            admin.createTopics(List.of(new NewTopic(shorter, 2, (short) 1).configs(Map.of("retention.ms", "86400000"))))
                    .all().get(15, TimeUnit.SECONDS);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(15)).ignoreExceptions()
                    .until(() -> admin.describeTopics(List.of(shorter)).allTopicNames().get(5, TimeUnit.SECONDS).containsKey(shorter));
        }

        KafkaTopicProvisioner.Check check = provisioner.ensure(shorter, 2, (short) 1);

        assertThat(check.done()).as("events flow").isTrue();
        assertThat(check.problem()).hasValueSatisfying(problem -> assertThat(problem)
                .contains(shorter, "keeps events PT24H, less than adapter.kafka.retention (PT336H)", "retention.ms=1209600000"));
    }

    /**
     * A cluster whose policy caps retention (7 days here, for RetentionCapPolicy's topics) refuses a topic asked with
     * adapter.kafka.retention: it is created without it, with the cluster's retention, and that is said. It was no
     * topic at all, the check tried again every 15 s for good.
     */
    @Test
    void aClusterThatCapsRetentionStillGetsItsTopicAndTheShortRetentionIsSaid() throws Exception {
        String topic = com.hospital.surveyinbox.support.RetentionCapPolicy.CAPPED + System.nanoTime();

        KafkaTopicProvisioner.Check check = provisioner.ensure(topic, 2, (short) 1);

        assertThat(check.done()).isTrue();
        assertThat(check.problem()).hasValueSatisfying(problem -> assertThat(problem)
                .contains(topic, "keeps events PT168H, less than adapter.kafka.retention (PT336H)"));
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers))) {
            assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get(15, TimeUnit.SECONDS).get(topic).partitions()).hasSize(2);
        }
    }
}
