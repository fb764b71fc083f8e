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
    private volatile int partitionCount;

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

    /**
     * Accepts one sentinel per partition of the topic ({@code accept}: a new row of the subject given, its inboxId),
     * each subject ({@code prefix}-n) chosen so that the producer's partitioner puts its event there, and waits until
     * every one was read: an event published before them is visible by then, whatever partition its key went to.
     * One sentinel proved it for its own partition only (events are keyed by subject).
     */
    public void awaitSentinelOnEveryPartition(String prefix, java.util.function.Function<String, String> accept) {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> partitionCount > 0);
        int partitions = partitionCount;
        Map<Integer, String> subjects = new java.util.TreeMap<>();
        for (int n = 0; subjects.size() < partitions; n++) {
            String subject = prefix + "-" + n;
            byte[] key = subject.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            // the built-in partitioner's choice for a keyed record
            subjects.putIfAbsent(org.apache.kafka.common.utils.Utils.toPositive(
                    org.apache.kafka.common.utils.Utils.murmur2(key)) % partitions, subject);
        }
        Map<Integer, String> sentinels = new java.util.TreeMap<>();
        subjects.forEach((partition, subject) -> sentinels.put(partition, accept.apply(subject)));
        sentinels.forEach((partition, inboxId) -> {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20))
                    .until(() -> !forInboxId(inboxId).isEmpty());
            org.assertj.core.api.Assertions.assertThat(forInboxId(inboxId).get(0).partition())
                    .as("the partition of sentinel " + inboxId).isEqualTo(partition);
        });
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
                    partitionCount = partitions.size();
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
