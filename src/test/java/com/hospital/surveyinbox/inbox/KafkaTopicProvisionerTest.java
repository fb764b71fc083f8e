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
 * The event topic on the real broker: created with the configured partitions, and one that exists with fewer (the
 * broker's own default on a first publish, or made by hand) named on start instead of passing as "exists".
 */
class KafkaTopicProvisionerTest extends IntegrationTest {

    @Autowired
    KafkaTopicProvisioner provisioner;

    @Value("${camel.component.kafka.brokers}")
    String brokers;

    @Test
    void aTopicThatExistsWithFewerPartitionsIsNamedAndOneItCreatesHasThemAll() throws Exception {
        String small = "provisioner-small-" + System.nanoTime();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers))) {
            admin.createTopics(List.of(new NewTopic(small, 1, (short) 1))).all().get(15, TimeUnit.SECONDS);
            // an existing topic: its metadata known to the broker (a topic made moments ago may not be yet)
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(15)).ignoreExceptions()
                    .until(() -> admin.describeTopics(List.of(small)).allTopicNames().get(5, TimeUnit.SECONDS).containsKey(small));

            assertThat(provisioner.ensure(small, 8, (short) 1)).hasValueSatisfying(problem -> assertThat(problem)
                    .contains(small, "exists with 1 partitions", "adapter.kafka.partitions (8)"));

            String fresh = "provisioner-fresh-" + System.nanoTime();
            assertThat(provisioner.ensure(fresh, 8, (short) 1)).isEmpty();
            assertThat(admin.describeTopics(List.of(fresh)).allTopicNames().get(15, TimeUnit.SECONDS).get(fresh).partitions()).hasSize(8);
            // and as it is now: nothing to say
            assertThat(provisioner.ensure(fresh, 8, (short) 1)).isEmpty();
        }
    }

    /** Three replicas or more: an acknowledged event is on two of them (one broker here: the request as built). */
    @Test
    void aTopicWithThreeReplicasAcknowledgesOnlyWhatTwoHave() {
        assertThat(KafkaTopicProvisioner.newTopic("t", 8, (short) 3).configs()).containsEntry("min.insync.replicas", "2");
        assertThat(KafkaTopicProvisioner.newTopic("t", 8, (short) 1).configs()).isNullOrEmpty();
    }
}
