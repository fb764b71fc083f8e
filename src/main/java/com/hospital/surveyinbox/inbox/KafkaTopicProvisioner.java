package com.hospital.surveyinbox.inbox;

import com.hospital.surveyinbox.config.LoggedFailure;
import com.hospital.surveyinbox.config.AdapterProperties;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Creates the event topic with enough partitions for the configured consumer concurrency when it does
 * not exist yet; a broker's auto-created topic would have one partition and serialize all processing.
 * Failure to reach the broker is not fatal (reception does not need Kafka: the redelivery job republishes
 * later), but it is not the end either: the check is tried again every {@link #RETRY} until it is done, so a
 * broker that was away at the start (restarted with the rollout, an egress rule fixed later) gets its topic
 * without a restart of the pods, and {@link #ensured()} (the {@code kafka} health) says until when it was not.
 */
@Component
public class KafkaTopicProvisioner implements InitializingBean, DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(KafkaTopicProvisioner.class);
    /** Pause between checks while the broker could not be asked. */
    static final Duration RETRY = Duration.ofSeconds(15);

    private final AdapterProperties properties;
    private final String brokers;
    private final Duration retry;
    private volatile boolean ensured;
    private volatile String lastProblem;
    private ScheduledExecutorService retries;

    private final Map<String, Object> security;

    @Autowired
    public KafkaTopicProvisioner(AdapterProperties properties, @Value("${camel.component.kafka.brokers}") String brokers,
                                 org.springframework.core.env.Environment environment) {
        this(properties, brokers, RETRY, KafkaClientSecurity.of(environment));
    }

    KafkaTopicProvisioner(AdapterProperties properties, String brokers, Duration retry) {
        this(properties, brokers, retry, Map.of());
    }

    /** {@code security}: the routes' TLS/SASL settings as Kafka client settings ({@link KafkaClientSecurity}). */
    KafkaTopicProvisioner(AdapterProperties properties, String brokers, Duration retry, Map<String, Object> security) {
        this.properties = properties;
        this.brokers = brokers;
        this.retry = retry;
        this.security = Map.copyOf(security);
    }

    @Override
    public void afterPropertiesSet() {
        AdapterProperties.Kafka kafka = properties.getKafka();
        if (kafka.getPartitions() < kafka.getConsumers()) {
            log.warn("adapter.kafka.partitions ({}) < adapter.kafka.consumers ({}): some consumers will idle",
                    kafka.getPartitions(), kafka.getConsumers());
        }
        if (!check()) {
            retries = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "kafka-topic-check");
                t.setDaemon(true);
                return t;
            });
            retries.scheduleWithFixedDelay(() -> {
                if (check()) {
                    log.info("Topic {} checked after all: events flow", kafka.getTopic());
                    retries.shutdown();
                }
            }, retry.toMillis(), retry.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** One check of the configured topic; true once it is done (the topic is there, whatever it had to say). */
    private boolean check() {
        AdapterProperties.Kafka kafka = properties.getKafka();
        Check result = ensure(kafka.getTopic(), kafka.getPartitions(), kafka.getReplicationFactor());
        result.problem().ifPresent(problem -> {
            // said once, not every 15 s of a broker outage; again when it changes
            if (!problem.equals(lastProblem)) {
                log.warn(result.done() ? "{}" : "{}; tried again every " + retry.toSeconds() + " s", problem);
            } else {
                log.debug("{}", problem);
            }
            lastProblem = problem;
        });
        ensured = result.done();
        return result.done();
    }

    /** Whether the topic has been checked (created, found, or grown) since this instance started. */
    public boolean ensured() {
        return ensured;
    }

    @Override
    public void destroy() {
        if (retries != null) {
            retries.shutdownNow();
        }
    }

    /** A check's result: done (the topic is there), and what to say about it, if anything. */
    record Check(boolean done, Optional<String> problem) {
    }

    /**
     * The topic as created: with three replicas or more, an event is acknowledged (acks=all) only once two of them
     * have it ({@code min.insync.replicas} 2). The broker's default is 1: a lone leader could acknowledge an event
     * and die with it (the row is still RECEIVED, but it waits for the redelivery job). With one replica (dev's single
     * broker), 1, set on the topic itself: a cluster hardened to a default of 2 (MSK's three-AZ default) gave a topic of
     * one replica a minimum it can never reach, and every publish (acks=all) failed with NOT_ENOUGH_REPLICAS. Two
     * replicas keep the cluster's default.
     */
    static NewTopic newTopic(String topic, int partitions, short replicationFactor, Duration retention) {
        Map<String, String> configs = new java.util.HashMap<>();
        // the events a database restore replays (docs/operations.md): kept as long as adapter.kafka.retention says,
        // not the broker's default (7 days, often less); null: the cluster's (its policy refused ours)
        if (retention != null) {
            configs.put("retention.ms", Long.toString(retention.toMillis()));
        }
        if (replicationFactor >= 3) {
            configs.put("min.insync.replicas", "2");
        } else if (replicationFactor == 1) {
            configs.put("min.insync.replicas", "1");
        }
        return new NewTopic(topic, partitions, replicationFactor).configs(configs);
    }

    /**
     * What to say of an existing topic's retention: one shorter than adapter.kafka.retention loses the events a
     * database restore would replay (infinite, -1, is never short). Not altered here: the topic's settings are the
     * Kafka operator's, as its replicas are.
     */
    private Optional<String> retentionProblem(Admin admin, String topic) {
        long wanted = properties.getKafka().getRetention().toMillis();
        org.apache.kafka.common.config.ConfigResource resource = new org.apache.kafka.common.config.ConfigResource(
                org.apache.kafka.common.config.ConfigResource.Type.TOPIC, topic);
        try {
            org.apache.kafka.clients.admin.ConfigEntry entry = null;
            // a topic created a moment ago may not be known yet to the broker asked (its metadata spreading): asked
            // again for a few seconds, not reported as a retention that could not be read
            for (int tries = 1; ; tries++) {
                try {
                    entry = admin.describeConfigs(List.of(resource)).all().get(15, TimeUnit.SECONDS).get(resource).get("retention.ms");
                    break;
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) || tries == 10) {
                        throw e;
                    }
                    Thread.sleep(500);
                }
            }
            long kept = entry == null || entry.value() == null ? -1 : Long.parseLong(entry.value());
            if (kept >= 0 && kept < wanted) {
                return Optional.of("Topic " + topic + " keeps events " + Duration.ofMillis(kept) + ", less than adapter.kafka.retention ("
                        + properties.getKafka().getRetention() + "): a database restore further back finds no events to replay; "
                        + "raise it with kafka-configs --alter --add-config retention.ms=" + wanted + " (docs/deploying.md)");
            }
            return Optional.empty();
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // no DESCRIBE_CONFIGS right, a slow broker: events flow, the retention is not known
            return Optional.of("Topic " + topic + ": its retention could not be read (" + LoggedFailure.describe(e)
                    + "); it must keep events at least adapter.kafka.retention (" + properties.getKafka().getRetention() + ")");
        }
    }

    /**
     * Creates the topic, or checks the one that exists: one the broker created by itself (a publish or a consumer's
     * subscription while this check could not reach it) or someone created by hand has the broker's defaults, often
     * one partition and one replica. Fewer partitions than configured are added here (one consumer in the whole
     * cluster would take every row): keys then move to other partitions, which this service allows, since a
     * subject's order is kept by the claim's ordering guard in the database, never by a partition. Fewer replicas
     * are said, on every start (moving replicas is the Kafka operator's).
     */
    Check ensure(String topic, int partitions, short replicationFactor) {
        try (Admin admin = Admin.create(KafkaClientSecurity.admin(security, brokers, 5_000, 10_000))) {
            Throwable notCreated = null;
            try {
                NewTopic wanted = newTopic(topic, partitions, replicationFactor, properties.getKafka().getRetention());
                try {
                    admin.createTopics(List.of(wanted)).all().get(15, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.PolicyViolationException
                            || e.getCause() instanceof org.apache.kafka.common.errors.InvalidConfigurationException)) {
                        throw e;
                    }
                    // a cluster whose policy caps retention (a managed tier's 7 days) refused the topic for it: created
                    // with the cluster's retention, said below, rather than no topic at all
                    admin.createTopics(List.of(newTopic(topic, partitions, replicationFactor, null))).all().get(15, TimeUnit.SECONDS);
                    log.info("Created topic {} with {} partitions, without adapter.kafka.retention ({}): the cluster refused it",
                            topic, partitions, LoggedFailure.describe(e.getCause()));
                    return new Check(true, retentionProblem(admin, topic));
                }
                log.info("Created topic {} with {} partitions", topic, partitions);
                return new Check(true, Optional.empty());
            } catch (ExecutionException e) {
                // exists, or not ours to create (no CREATE right, a creation policy): what is there is read below
                notCreated = e.getCause() instanceof TopicExistsException ? null : e.getCause();
                if (notCreated instanceof org.apache.kafka.common.errors.TimeoutException) {
                    // the broker did not answer: asking it to describe the topic would only wait as long again
                    return new Check(false, Optional.of("Could not ensure topic " + topic + ": " + LoggedFailure.describe(notCreated)));
                }
            }
            org.apache.kafka.clients.admin.TopicDescription found;
            try {
                found = admin.describeTopics(List.of(topic)).allTopicNames().get(15, TimeUnit.SECONDS).get(topic);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
                    // being created by another instance (its metadata not everywhere yet), or not creatable by this one:
                    // read again at the next check, partitions included
                    return new Check(false, Optional.of("Topic " + topic + " is not there yet"
                            + (notCreated == null ? "" : " and could not be created: " + LoggedFailure.describe(notCreated))));
                }
                throw e;
            }
            int foundPartitions = found.partitions().size();
            int foundReplicas = found.partitions().stream().mapToInt(p -> p.replicas().size()).min().orElse(0);
            if (foundPartitions < partitions) {
                try {
                    admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(partitions))).all().get(15, TimeUnit.SECONDS);
                    log.warn("Topic {} existed with {} partitions (the broker's default, or made by hand): grown to "
                            + "adapter.kafka.partitions ({}) so every consumer gets some", topic, foundPartitions, partitions);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.InvalidPartitionsException)) {
                        // not ours to alter (no ALTER right, a policy): events flow, on fewer partitions; said at every start
                        return new Check(true, Optional.of("Topic " + topic + " exists with " + foundPartitions
                                + " partitions, fewer than adapter.kafka.partitions (" + partitions + "), and could not be grown ("
                                + LoggedFailure.describe(e.getCause()) + "): consumers beyond its partitions idle; raise them "
                                + "with kafka-topics --alter (docs/deploying.md)"
                                + retentionProblem(admin, topic).map(problem -> "; " + problem).orElse("")));
                    } // InvalidPartitions: another instance grew it first
                }
            }
            List<String> problems = new java.util.ArrayList<>();
            if (foundReplicas < replicationFactor) {
                problems.add("Topic " + topic + " exists with " + foundReplicas + " replicas, fewer than "
                        + "adapter.kafka.replication-factor (" + replicationFactor + "): one broker's restart can stop "
                        + "processing; raise them with kafka-reassign-partitions (docs/deploying.md)");
            }
            retentionProblem(admin, topic).ifPresent(problems::add);
            if (!problems.isEmpty()) {
                return new Check(true, Optional.of(String.join("; ", problems)));
            }
            log.info("Topic {} exists with {} replicas", topic, foundReplicas);
            return new Check(true, Optional.empty());
        } catch (Exception e) {
            return new Check(false, Optional.of("Could not ensure topic " + topic + ": " + LoggedFailure.describe(e)));
        }
    }
}
