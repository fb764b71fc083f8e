package com.hospital.surveyinbox.inbox;

import com.hospital.surveyinbox.config.LoggedFailure;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Micro-batched group insert for receptions: concurrent receptions' rows are committed together, up to
 * {@code maxRows} in one transaction with one commit. A reception still answers only after its own row is
 * committed; under load one commit (one WAL flush, one round of transaction work) serves many receptions
 * instead of one each, which is what the database spends most of a single-row insert on.
 *
 * <p>Leader and followers, no writer threads: a reception queues its row in its lane; if nobody is
 * writing that lane, it writes what is waiting itself (its own row and any others) on its own thread, else
 * it waits until its row was written or the lane is free again. An idle service thus writes a lone row with
 * no hand-off at all (measured: two thread wake-ups per reception with dedicated writers), and under load
 * the rows that queued during one commit form the next group.
 *
 * <p>Failure isolation: a group is one transaction, so a row the database refuses (a constraint, a
 * trigger at commit, a value the index cannot hold) would take the others down with it; such a group is
 * retried row by row, and only the refused row's reception fails. Only when the database cannot be
 * reached or cannot take work now ({@link DatabaseFailures#unavailable}: SQLState class 08, read-only, no connection
 * from the pool, …) does
 * the whole group fail at once with that error (every reception answers 503), without a retry per row. A
 * subject another transaction holds never holds the group: its members are left out ({@link InboxStore#NEXT_IDS_TRIED})
 * and written alone after it, each waiting for its own subject.
 */
final class GroupInsert implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GroupInsert.class);

    /** Longest a waiting reception sleeps between looks at its lane (a safety net; a finished writer wakes the next). */
    private static final long WAIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    /**
     * A reception waiting in its lane. {@code alone}: left out of a group because another transaction held its subject
     * ({@link InboxStore#NEXT_IDS_TRIED}); back at the head of its lane, it is written by itself next, waiting for its
     * subject, as a lone row does (bounded by the connection's statement bound): the rows behind it, its subject's
     * later ones among them, wait and keep their order, as they waited behind a whole group for that lock before.
     */
    private record Pending(ReceivedMessage message, CompletableFuture<Acceptance> result, Thread waiter, long deadline,
                           java.util.concurrent.atomic.AtomicBoolean alone) {
    }

    /** A group's statements never get less than this (ms), however close its earliest deadline. */
    private static final long SHORTEST_GROUP_BUDGET_MS = 200;

    /**
     * A member stays in its group with at least this many times its lane's recent write time left
     * ({@link #withoutTheLate}): a little over 1, since a member with more time than a write takes would be stored.
     */
    static final double TIME_LEFT_PER_RECENT_WRITE = 1.1;

    /**
     * A lane: its queue and who writes it. A srvyDrawupNo always goes to the same lane, and a lane has one
     * writer at a time, so rows of one subject are written one after the other in arrival order and take
     * their ids in that order (the ordering guard relies on ids). Lanes write in parallel.
     */
    private static final class Lane {
        final java.util.concurrent.BlockingDeque<Pending> queue = new java.util.concurrent.LinkedBlockingDeque<>();
        final ReentrantLock writing = new ReentrantLock();
        /**
         * Moving average (nanos) of this lane's writes that went through as written (a group in one statement, or
         * one row); 0 until the first. Written by the lane's writer only (it holds {@link #writing}).
         */
        volatile double recentWriteNanos;

        void wrote(long nanos) {
            double recent = recentWriteNanos;
            recentWriteNanos = recent == 0 ? nanos : 0.7 * recent + 0.3 * nanos;
        }
    }

    private final List<Lane> lanes = new ArrayList<>();
    private final java.util.function.BiFunction<List<ReceivedMessage>, java.time.Duration, List<Acceptance>> insertAll;
    private final Function<ReceivedMessage, Acceptance> insertOne;
    private final int maxRows;
    private final DistributionSummary groupRows;
    private final java.time.Duration storeTimeout;
    private volatile boolean closed;

    GroupInsert(int lanes, int maxRows, java.util.function.BiFunction<List<ReceivedMessage>, java.time.Duration, List<Acceptance>> insertAll,
                Function<ReceivedMessage, Acceptance> insertOne, MeterRegistry meters) {
        this(lanes, maxRows, insertAll, insertOne, meters, java.time.Duration.ofMinutes(1));
    }

    GroupInsert(int lanes, int maxRows, java.util.function.BiFunction<List<ReceivedMessage>, java.time.Duration, List<Acceptance>> insertAll,
                Function<ReceivedMessage, Acceptance> insertOne, MeterRegistry meters, java.time.Duration storeTimeout) {
        this.storeTimeout = storeTimeout;
        this.insertAll = insertAll;
        this.insertOne = insertOne;
        this.maxRows = maxRows;
        this.groupRows = DistributionSummary.builder("adapter.inbox.insert.group")
                .description("receptions committed together in one transaction").baseUnit("rows")
                .serviceLevelObjectives(1, 2, 4, 8, 16, 32, 64).register(meters);
        for (int i = 0; i < lanes; i++) {
            this.lanes.add(new Lane());
        }
    }

    /** Stores the message with whatever else is waiting; returns once its row is committed. */
    Acceptance accept(ReceivedMessage message) {
        if (closed) {
            return insertOne.apply(message);
        }
        long deadline = System.nanoTime() + storeTimeout.toNanos();
        Pending pending = new Pending(message, new CompletableFuture<>(), Thread.currentThread(), deadline,
                new java.util.concurrent.atomic.AtomicBoolean());
        Lane lane = lanes.get(Math.floorMod(message.srvyDrawupNo().hashCode(), lanes.size()));
        lane.queue.add(pending);
        // An interrupt (only Tomcat's shutdownNow sends one) does not end the wait: the row may be in a group being
        // committed, whose outcome is this reception's answer, and as a writer the thread's connection borrow would fail
        // on it. It is set aside while the reception waits, so parkNanos sleeps (it returns at once while the flag is
        // set: every interrupted reception spun until its group answered), and set again on the way out.
        boolean interrupted = false;
        try {
            while (!pending.result().isDone()) {
                interrupted |= Thread.interrupted();
                if (lane.writing.tryLock()) {
                    try {
                        if (!pending.result().isDone()) { // answered meanwhile (a failed write drained the lane): not a writer
                            writeWaiting(lane);
                        }
                    } finally {
                        lane.writing.unlock();
                    }
                    Pending next = lane.queue.peek();
                    if (next != null) { // rows queued while this group was written: their first becomes the writer
                        LockSupport.unpark(next.waiter());
                    }
                    continue;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    if (lane.queue.remove(pending)) {
                        throw storeTimedOut(); // never written: nothing can commit it any more
                    }
                    // its row is in a group being written (or out of the lane for a moment, handed back to its head by a
                    // writer whose own time ran out): that group's outcome is this reception's answer. Answering
                    // 503 now would let the sender retry a row that may still commit (a second SEND = a resend request).
                    // The wait is bounded: the group's statements time out by its earliest deadline, its commit by the
                    // socket timeout.
                    LockSupport.parkNanos(this, WAIT_SLICE_NANOS);
                    continue;
                }
                LockSupport.parkNanos(this, Math.min(left, WAIT_SLICE_NANOS));
            }
            try {
                return pending.result().join();
            } catch (CompletionException e) {
                if (e.getCause() instanceof RuntimeException runtime) {
                    throw runtime;
                }
                throw new IllegalStateException(e.getCause());
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A database that stops answering, or answers too slowly, while the row still waits in its lane: the
     * sender must not wait with it, and the row is taken out, never to be written.
     */
    private RuntimeException storeTimedOut() {
        return new org.springframework.dao.QueryTimeoutException("inbox row not written within "
                + storeTimeout.toMillis() + " ms (never written)",
                new java.sql.SQLTimeoutException("store timeout", "57014"));
    }

    /** Receptions waiting for their row to be written. */
    int queued() {
        return lanes.stream().mapToInt(l -> l.queue.size()).sum();
    }

    /** One group: whatever waits in the lane, up to maxRows, oldest first. The caller holds the lane. */
    private void writeWaiting(Lane lane) {
        List<Pending> drained = new ArrayList<>(Math.min(maxRows, lane.queue.size() + 1));
        Pending head = lane.queue.peek();
        lane.queue.drainTo(drained, head != null && head.alone().get() ? 1 : maxRows);
        long now = System.nanoTime();
        List<Pending> alive = new ArrayList<>(drained.size());
        for (Pending p : drained) {
            if (p.deadline() - now <= 0) {
                p.result().completeExceptionally(storeTimedOut()); // its reception gives up; never written
                if (p.waiter() != Thread.currentThread()) {
                    LockSupport.unpark(p.waiter());
                }
            } else {
                alive.add(p);
            }
        }
        List<Pending> group = withoutTheLate(lane, alive);
        if (group.isEmpty()) {
            return;
        }
        if (drained.stream().anyMatch(p -> p.waiter() == Thread.currentThread() && p.result().isDone())) {
            // this writer's own reception ended before the write (its time ran out, or too late for the group): it
            // answers its 503 now rather than after writing the others; they go back to the head of the lane in
            // their order, and the first of them writes
            for (int i = group.size() - 1; i >= 0; i--) {
                lane.queue.offerFirst(group.get(i));
            }
            LockSupport.unpark(group.get(0).waiter());
            return;
        }
        try {
            RuntimeException down = write(lane, group);
            if (down != null && DatabaseFailures.unreachable(down)) {
                // the database cannot be reached: the rows queued behind this group would each be written in turn,
                // one socket timeout after another, their senders answered long past store-timeout; never written,
                // they are answered 503 with it now (not for one statement's timeout or deadlock: the next group
                // may well be stored)
                List<Pending> behind = new ArrayList<>();
                lane.queue.drainTo(behind);
                for (Pending p : behind) {
                    p.result().completeExceptionally(down);
                    LockSupport.unpark(p.waiter());
                }
            }
        } catch (Throwable t) { // never leave a reception waiting on a group that failed unexpectedly
            log.error("Inbox group insert failed on a group of {}: {}", group.size(), LoggedFailure.describe(t));
            group.forEach(p -> p.result().completeExceptionally(t));
        } finally {
            for (Pending p : group) {
                if (p.waiter() != Thread.currentThread()) {
                    LockSupport.unpark(p.waiter());
                }
            }
        }
    }

    /**
     * The group less its members too late for it, each answered 503 now (never written): a group's statements are
     * bounded by its earliest member's time left, so on a slow database (a write taking most of store-timeout) the
     * member that waited through the previous write made the whole group time out, and the next group, whose first
     * member had waited through that failure, too: every other group failed. A member whose time left is shorter
     * than {@link #TIME_LEFT_PER_RECENT_WRITE} times what its lane's writes took lately is answered at once if
     * another member has that time; the rest are written within the later deadline. A lone member, or a group where
     * none has that time, is tried as it is (its best chance).
     */
    private List<Pending> withoutTheLate(Lane lane, List<Pending> group) {
        long needed = (long) (TIME_LEFT_PER_RECENT_WRITE * lane.recentWriteNanos);
        if (group.size() < 2 || needed <= 0) {
            return group;
        }
        long now = System.nanoTime();
        List<Pending> inTime = new ArrayList<>(group.size());
        for (Pending p : group) {
            if (p.deadline() - now >= needed) {
                inTime.add(p);
            }
        }
        if (inTime.isEmpty() || inTime.size() == group.size()) {
            return group;
        }
        for (Pending p : group) {
            if (!inTime.contains(p)) {
                p.result().completeExceptionally(storeTimedOut());
                if (p.waiter() != Thread.currentThread()) {
                    LockSupport.unpark(p.waiter());
                }
            }
        }
        log.debug("{} of a group of {} inbox rows answered 503 unwritten: less time left than the recent writes took",
                group.size() - inTime.size(), group.size());
        return inTime;
    }

    /**
     * Writes the group; returns the failure when the database could not take it ("unavailable"), else null. Row by
     * row (a group the database refused), the first such failure fails the rows after it: they would only wait for
     * the same database in turn.
     */
    private RuntimeException write(Lane lane, List<Pending> group) {
        long started = System.nanoTime();
        if (group.size() == 1) {
            groupRows.record(1);
            RuntimeException down = writeOne(group.get(0));
            if (!group.get(0).result().isCompletedExceptionally()) {
                lane.wrote(System.nanoTime() - started);
            }
            return down;
        }
        List<Acceptance> results;
        // the group's statements end before its earliest reception's deadline (or are cancelled: nothing stored)
        long earliest = group.stream().mapToLong(Pending::deadline).min().orElseThrow();
        java.time.Duration budget = java.time.Duration.ofMillis(Math.max(SHORTEST_GROUP_BUDGET_MS,
                TimeUnit.NANOSECONDS.toMillis(earliest - System.nanoTime())));
        try {
            results = insertAll.apply(group.stream().map(Pending::message).toList(), budget);
            lane.wrote(System.nanoTime() - started); // the row-by-row fallback below is not a write time of the lane
        } catch (RuntimeException e) {
            groupRows.record(group.size());
            // unreachable or too slow: row by row would only wait longer. Not a deadlock: two groups reusing each
            // other's Idempotency-Keys cross-wise wait on each other's rows, and the one PostgreSQL ends failed its
            // receptions (up to a group) with 503; written alone, each row waits on one key only and cannot deadlock
            if (DatabaseFailures.unavailable(e) && !DatabaseFailures.conflicted(e)) {
                group.forEach(p -> p.result().completeExceptionally(e));
                return e;
            }
            log.warn("A group of {} inbox rows was refused ({}); storing them one by one", group.size(), LoggedFailure.describe(e));
            RuntimeException down = null;
            for (Pending p : group) {
                if (down != null) {
                    p.result().completeExceptionally(down);
                } else if (p.deadline() - System.nanoTime() <= 0) {
                    // its reception's time ran out while the rows before it were written (a slow database: one
                    // statement bound each, up to a group of them): never written, so a 503 is safe now; written
                    // anyway, it committed minutes after its sender gave up, and the sender's retry was a second row
                    p.result().completeExceptionally(storeTimedOut());
                } else {
                    down = writeOne(p);
                }
            }
            return down;
        }
        List<Pending> leftOut = new ArrayList<>();
        for (int i = 0; i < group.size(); i++) {
            if (results.get(i) != null) {
                group.get(i).result().complete(results.get(i));
            } else {
                leftOut.add(group.get(i));
            }
        }
        // a member whose subject another transaction held (another pod's group, a session that lingers): the group
        // did not wait for it. Back to the head of the lane, in order, each to be written alone next (its own thread
        // is woken to write it), waiting for that subject; this writer's own reception is answered now
        if (leftOut.size() < group.size()) {
            groupRows.record(group.size() - leftOut.size()); // the left out are counted as the groups of one they become
        }
        for (int i = leftOut.size() - 1; i >= 0; i--) {
            leftOut.get(i).alone().set(true);
            lane.queue.offerFirst(leftOut.get(i));
        }
        return null;
    }

    private RuntimeException writeOne(Pending pending) {
        try {
            pending.result().complete(insertOne.apply(pending.message()));
            return null;
        } catch (RuntimeException e) {
            pending.result().completeExceptionally(e);
            return DatabaseFailures.unavailable(e) ? e : null;
        }
    }

    /**
     * After this, a reception writes its own row alone. Rows already queued are written by the receptions
     * waiting for them (each is a live request thread), so nothing queued is left behind.
     */
    @Override
    public void close() {
        closed = true;
    }
}
