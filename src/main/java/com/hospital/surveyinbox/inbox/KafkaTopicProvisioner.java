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
        try (Admin admin = Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000))) {
            admin.createTopics(List.of(new NewTopic(kafka.getTopic(), kafka.getPartitions(), kafka.getReplicationFactor())))
                    .all().get(15, TimeUnit.SECONDS);
            log.info("Created topic {} with {} partitions", kafka.getTopic(), kafka.getPartitions());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TopicExistsException) {
                log.info("Topic {} exists", kafka.getTopic());
            } else {
                log.warn("Could not ensure topic {}: {}", kafka.getTopic(), LoggedFailure.describe(e.getCause()));
            }
        } catch (Exception e) {
            log.warn("Could not ensure topic {}: {}", kafka.getTopic(), LoggedFailure.describe(e));
        }
    }
}
