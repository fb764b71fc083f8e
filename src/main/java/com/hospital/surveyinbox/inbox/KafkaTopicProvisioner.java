package com.hospital.surveyinbox.inbox;

import com.hospital.surveyinbox.config.LoggedFailure;
import com.hospital.surveyinbox.config.AdapterProperties;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Creates the event topic with enough partitions for the configured consumer concurrency when it does
 * not exist yet; a broker's auto-created topic would have one partition and serialize all processing.
 * An existing topic is left as it is. Failure to reach the broker is logged, not fatal: reception does
 * not need Kafka (the redelivery job republishes later).
 */
@Component
public class KafkaTopicProvisioner implements InitializingBean {

    private static final Logger log = LoggerFactory.getLogger(KafkaTopicProvisioner.class);

    private final AdapterProperties properties;
    private final String brokers;

    public KafkaTopicProvisioner(AdapterProperties properties, @Value("${camel.component.kafka.brokers}") String brokers) {
        this.properties = properties;
        this.brokers = brokers;
    }

    @Override
    public void afterPropertiesSet() {
        AdapterProperties.Kafka kafka = properties.getKafka();
        if (kafka.getPartitions() < kafka.getConsumers()) {
            log.warn("adapter.kafka.partitions ({}) < adapter.kafka.consumers ({}): some consumers will idle",
                    kafka.getPartitions(), kafka.getConsumers());
        }
        ensure(kafka.getTopic(), kafka.getPartitions(), kafka.getReplicationFactor()).ifPresent(log::warn);
    }

    /**
     * The topic as created: with three replicas or more, an event is acknowledged (acks=all) only once two of them
     * have it ({@code min.insync.replicas} 2). The broker's default is 1: a lone leader could acknowledge an event
     * and die with it (the row is still RECEIVED, but it waits for the redelivery job).
     */
    static NewTopic newTopic(String topic, int partitions, short replicationFactor) {
        NewTopic created = new NewTopic(topic, partitions, replicationFactor);
        return replicationFactor >= 3 ? created.configs(Map.of("min.insync.replicas", "2")) : created;
    }

    /**
     * Creates the topic, or checks the one that exists: one the broker created by itself (a first publish while this
     * check could not reach it) or someone created by hand has the broker's defaults, often one partition and one
     * replica: one consumer in the whole cluster takes every row, and a restart of that broker stops them all. Such
     * a topic is not changed here (more partitions move keys; that is an operator's decision) but said, on every
     * start. Returns what is wrong with it, if anything.
     */
    java.util.Optional<String> ensure(String topic, int partitions, short replicationFactor) {
        try (Admin admin = Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000))) {
            try {
                admin.createTopics(List.of(newTopic(topic, partitions, replicationFactor))).all().get(15, TimeUnit.SECONDS);
                log.info("Created topic {} with {} partitions", topic, partitions);
                return java.util.Optional.empty();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    return java.util.Optional.of("Could not ensure topic " + topic + ": " + LoggedFailure.describe(e.getCause()));
                }
            }
            org.apache.kafka.clients.admin.TopicDescription found;
            try {
                found = admin.describeTopics(List.of(topic)).allTopicNames().get(15, TimeUnit.SECONDS).get(topic);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
                    log.info("Topic {} is being created by another instance", topic); // its metadata not everywhere yet
                    return java.util.Optional.empty();
                }
                throw e;
            }
            int foundPartitions = found.partitions().size();
            int foundReplicas = found.partitions().stream().mapToInt(p -> p.replicas().size()).min().orElse(0);
            if (foundPartitions < partitions || foundReplicas < replicationFactor) {
                return java.util.Optional.of("Topic " + topic + " exists with " + foundPartitions + " partitions and "
                        + foundReplicas + " replicas, fewer than adapter.kafka.partitions (" + partitions
                        + ") / replication-factor (" + replicationFactor + "): consumers beyond its partitions idle and "
                        + "one broker's restart can stop processing; raise partitions with kafka-topics --alter, replicas with "
                        + "kafka-reassign-partitions (docs/deploying.md)");
            }
            log.info("Topic {} exists with {} partitions and {} replicas", topic, foundPartitions, foundReplicas);
            return java.util.Optional.empty();
        } catch (Exception e) {
            return java.util.Optional.of("Could not ensure topic " + topic + ": " + LoggedFailure.describe(e));
        }
    }
}
