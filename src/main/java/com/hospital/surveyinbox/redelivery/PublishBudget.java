package com.hospital.surveyinbox.redelivery;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * How much publishing one redelivery tick may do ({@code routes/inbox-redeliver.camel.yaml}, variable
 * {@code budget}): until its deadline, and only while Kafka takes the events. The tick's owed replies have a
 * budget of their own (variable {@code replyBudget}: half the deadline, taken with this one after the tick's
 * bookkeeping), so a legacy system answering slowly cannot hold up the republishing: after its bookkeeping a tick
 * lasts the deadline plus what was in flight when it passed. During a broker outage every
 * publish waits up to the producer's delivery timeout, so without this one tick of a few hundred rows would
 * run for hours; with it the first failed publish ends the tick's publishing. A row not published now keeps
 * its state, and the stamp the tick put on it when it took it is removed ({@link #unpublishedIds},
 * sql/unstamp-unpublished.sql): the next tick takes it again (not the row whose own publish failed).
 */
public final class PublishBudget {

    private final Clock clock;
    private final Instant deadline;
    private volatile boolean kafkaFailed;
    private volatile int skipped;

    PublishBudget(Clock clock, Duration limit) {
        this.clock = clock;
        this.deadline = clock.instant().plus(limit);
    }

    private final java.util.Map<String, Integer> republished = new java.util.concurrent.ConcurrentHashMap<>();

    /** One event of {@code kind} Kafka took in this tick. */
    void tookOne(String kind) {
        republished.merge(kind, 1, Integer::sum);
    }

    /** Events of {@code kind} Kafka took in this tick. */
    public int republished(String kind) {
        return republished.getOrDefault(kind, 0);
    }

    private final java.util.Queue<Long> unpublishedReceived = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.Queue<Long> unpublishedFailed = new java.util.concurrent.ConcurrentLinkedQueue<>();

    /** A candidate the closed budget left, taken as FAILED (a due retry) or as RECEIVED. */
    void notPublished(Long inboxId, boolean failed) {
        if (inboxId != null) {
            (failed ? unpublishedFailed : unpublishedReceived).add(inboxId);
        }
    }

    /** The ids of the candidates the closed budget left, taken as FAILED or as RECEIVED, comma-separated; empty when none. */
    public String unpublishedIds(boolean failed) {
        return (failed ? unpublishedFailed : unpublishedReceived).stream().map(String::valueOf)
                .collect(java.util.stream.Collectors.joining(","));
    }

    /** Whether the next event may still be published in this tick. */
    public boolean open() {
        boolean open = !kafkaFailed && clock.instant().isBefore(deadline);
        if (!open) {
            skipped++;
        }
        return open;
    }

    /** The outcome of one publish; a failure closes the budget for the rest of the tick. */
    public void published(boolean ok) {
        if (!ok) {
            kafkaFailed = true;
        }
    }

    public boolean kafkaFailed() {
        return kafkaFailed;
    }

    public int skipped() {
        return skipped;
    }
}
