package com.hospital.surveyinbox.inbox;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.transaction.TransactionException;

/**
 * Micro-batched group insert for receptions: concurrent receptions' rows are written by a few writer
 * threads, each taking whatever is waiting (up to {@code maxRows}) into one transaction with one commit.
 * A reception still answers only after its own row is committed; under load one commit (one WAL flush,
 * one round of transaction work) serves many receptions instead of one each, which is what the database
 * spends most of a single-row insert on.
 *
 * <p>Failure isolation: a group is one transaction, so a row the database refuses (a constraint, a
 * trigger at commit, a value the index cannot hold) would take the others down with it; such a group is
 * retried row by row, and only the refused row's reception fails. Only when the database cannot be
 * reached ({@link DatabaseFailures#unavailable}: SQLState class 08, no connection from the pool, …) does
 * the whole group fail at once with that error (every reception answers 503), without a retry per row.
 */
final class GroupInsert implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GroupInsert.class);

    private record Pending(ReceivedMessage message, CompletableFuture<Acceptance> result) {
    }

    /**
     * One queue per writer; a srvyDrawupNo always goes to the same one, so rows of one subject are written
     * one after the other in arrival order and take their ids in that order (the ordering guard relies on
     * ids: with one shared queue, two writers could give a later row of a subject the smaller id).
     */
    private final List<BlockingQueue<Pending>> queues = new ArrayList<>();
    private final Function<List<ReceivedMessage>, List<Acceptance>> insertAll;
    private final Function<ReceivedMessage, Acceptance> insertOne;
    private final int maxRows;
    private final List<Thread> writers = new ArrayList<>();
    private final DistributionSummary groupRows;
    private final java.time.Duration storeTimeout;
    private volatile boolean closed;

    GroupInsert(int writers, int maxRows, Function<List<ReceivedMessage>, List<Acceptance>> insertAll,
                Function<ReceivedMessage, Acceptance> insertOne, MeterRegistry meters) {
        this(writers, maxRows, insertAll, insertOne, meters, java.time.Duration.ofMinutes(1));
    }

    GroupInsert(int writers, int maxRows, Function<List<ReceivedMessage>, List<Acceptance>> insertAll,
                Function<ReceivedMessage, Acceptance> insertOne, MeterRegistry meters, java.time.Duration storeTimeout) {
        this.storeTimeout = storeTimeout;
        this.insertAll = insertAll;
        this.insertOne = insertOne;
        this.maxRows = maxRows;
        this.groupRows = DistributionSummary.builder("adapter.inbox.insert.group")
                .description("receptions committed together in one transaction").baseUnit("rows")
                .publishPercentiles(0.5, 0.99).register(meters);
        for (int i = 0; i < writers; i++) {
            BlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
            queues.add(queue);
            Thread writer = new Thread(() -> run(queue), "inbox-writer-" + i);
            writer.setDaemon(true);
            writer.start();
            this.writers.add(writer);
        }
    }

    /** Stores the message with whatever else is waiting; returns once its row is committed. */
    Acceptance accept(ReceivedMessage message) {
        if (closed) {
            return insertOne.apply(message);
        }
        Pending pending = new Pending(message, new CompletableFuture<>());
        BlockingQueue<Pending> queue = queues.get(Math.floorMod(message.srvyDrawupNo().hashCode(), queues.size()));
        queue.add(pending);
        if (closed && queue.remove(pending)) { // closed while queuing: no writer may take it any more
            return insertOne.apply(message);
        }
        try {
            return pending.result().get(storeTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            // a database that stops answering without closing connections: the sender must not wait with it
            boolean neverWritten = queue.remove(pending);
            if (!neverWritten) { // in a group whose commit has not answered: its outcome is unknown
                pending.result().whenComplete((row, failure) -> {
                    if (row != null) {
                        log.warn("Inbox {} committed after its reception was answered 503 (store timeout)", row.inboxId());
                    }
                });
            }
            throw new org.springframework.dao.QueryTimeoutException("inbox row not committed within "
                    + storeTimeout.toMillis() + " ms (" + (neverWritten ? "never written" : "commit unanswered") + ")",
                    new java.sql.SQLTimeoutException("store timeout", "57014"));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the inbox row was being stored", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    /** Receptions waiting for a writer. */
    int queued() {
        return queues.stream().mapToInt(BlockingQueue::size).sum();
    }

    private void run(BlockingQueue<Pending> queue) {
        List<Pending> group = new ArrayList<>(maxRows);
        while (!closed || !queue.isEmpty()) {
            Pending first;
            try {
                first = queue.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                continue; // close() interrupts; the loop condition decides
            }
            if (first == null) {
                continue;
            }
            group.add(first);
            queue.drainTo(group, maxRows - 1);
            try {
                write(group);
            } catch (Throwable t) { // never leave a reception waiting on a writer that died, nor lose the writer
                log.error("Inbox writer failed on a group of {}", group.size(), t);
                group.forEach(p -> p.result().completeExceptionally(t));
            } finally {
                group.clear();
            }
        }
    }

    private void write(List<Pending> group) {
        groupRows.record(group.size());
        if (group.size() == 1) {
            writeOne(group.get(0));
            return;
        }
        List<Acceptance> results;
        try {
            results = insertAll.apply(group.stream().map(Pending::message).toList());
        } catch (RuntimeException e) {
            if (unreachable(e)) {
                group.forEach(p -> p.result().completeExceptionally(e));
            } else {
                log.warn("A group of {} inbox rows was refused ({}); storing them one by one", group.size(), e.toString());
                group.forEach(this::writeOne);
            }
            return;
        }
        for (int i = 0; i < group.size(); i++) {
            group.get(i).result().complete(results.get(i));
        }
    }

    private void writeOne(Pending pending) {
        try {
            pending.result().complete(insertOne.apply(pending.message()));
        } catch (RuntimeException e) {
            pending.result().completeExceptionally(e);
        }
    }

    /** The database did not answer (or would not take work): retrying row by row would only wait longer. */
    private static boolean unreachable(RuntimeException e) {
        return DatabaseFailures.unavailable(e);
    }

    /** Stops taking new groups; rows already queued are still written before the writers end. */
    @Override
    public void close() {
        closed = true;
        writers.forEach(Thread::interrupt);
        for (Thread writer : writers) {
            try {
                writer.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
