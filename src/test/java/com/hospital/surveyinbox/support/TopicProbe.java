package com.hospital.surveyinbox.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads every record of the event topic from the beginning, in a background thread, without joining the
 * service's consumer group — what an independent subscriber would see.
 */
public final class TopicProbe {

    public record Record(String key, JsonNode value, Map<String, String> headers, int partition) {
    }

    private static TopicProbe instance;
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final List<Record> records = new CopyOnWriteArrayList<>();

    private TopicProbe(String brokers, String topic) {
        Thread thread = new Thread(() -> run(brokers, topic), "topic-probe");
        thread.setDaemon(true);
        thread.start();
    }

    public static synchronized TopicProbe get(String topic) {
        if (instance == null) {
            instance = new TopicProbe(EmbeddedServices.get().kafkaBrokers(), topic);
        }
        return instance;
    }

    public List<Record> forSubject(String srvyDrawupNo) {
        return records.stream().filter(r -> srvyDrawupNo.equals(r.value().path("srvyDrawupNo").asText())).toList();
    }

    public List<Record> forInboxId(String inboxId) {
        return records.stream().filter(r -> inboxId.equals(r.value().path("inboxId").asText())).toList();
    }

    private void run(String brokers, String topic) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
            List<TopicPartition> assigned = List.of();
            while (!Thread.currentThread().isInterrupted()) {
                List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(5)).stream()
                        .map(p -> new TopicPartition(topic, p.partition())).collect(Collectors.toList());
                if (partitions.size() != assigned.size()) {
                    List<TopicPartition> fresh = new ArrayList<>(partitions);
                    fresh.removeAll(assigned);
                    consumer.assign(partitions);
                    consumer.seekToBeginning(fresh);
                    assigned = partitions;
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    Map<String, String> headers = new java.util.LinkedHashMap<>();
                    r.headers().forEach(h -> headers.put(h.key(), h.value() == null ? null : new String(h.value())));
                    records.add(new Record(r.key(), parse(r.value()), headers, r.partition()));
                }
            }
        } catch (RuntimeException e) {
            // the broker stops at JVM exit; anything else would leave later tests waiting for records: said so
            System.err.println("topic-probe stopped: " + e);
        }
    }

    /** A record's value as JSON; a record that is no event (ProcessingTest puts some on the topic) is kept as such. */
    private static JsonNode parse(String value) {
        if (value == null) { // a record without a value: readTree(null) threw, ending this probe's thread silently
            return MAPPER.createObjectNode().putNull("unparsable");
        }
        try {
            return MAPPER.readTree(value);
        } catch (IOException e) {
            return MAPPER.createObjectNode().put("unparsable", value);
        }
    }
}
