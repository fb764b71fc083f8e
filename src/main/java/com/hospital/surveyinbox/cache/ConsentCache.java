package com.hospital.surveyinbox.cache;

import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.processing.Registration;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.camel.http.base.HttpOperationFailedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Component;

/**
 * The small part of the consent cache that a route cannot hold ({@code routes/inbox-consents.camel.yaml}):
 * the per-srvyNo turn that makes concurrent misses share one lookup (messages of one survey arrive
 * together; without it the first burst pays the ~1 s lookup once per consumer), the TTL in seconds for
 * the {@code SETEX} step, and the warning and counters. Redis itself is reached by the route through
 * camel-spring-redis over Boot's {@link StringRedisTemplate} ({@code camel.component.spring-redis.redis-template});
 * after a failed command it leaves Redis out for a pause ({@link #usable}), and after {@link #SILENT_TIMEOUTS}
 * timed-out commands in a row it drops Boot's shared Lettuce connection so that it reconnects ({@link #unavailable}).
 */
@Component("consentCache")
public class ConsentCache {

    private static final Logger log = LoggerFactory.getLogger(ConsentCache.class);

    private final AdapterProperties properties;
    private final MeterRegistry meters;
    private final ConcurrentHashMap<String, Lane> turns = new ConcurrentHashMap<>();
    /** One srvyNo's lookups in this instance: the turn, how many lookups ended, and the last one's answer or refusal. */
    private static final class Lane {
        /** Fair: consumers take their turns in the order they came (an answer goes to those who waited). */
        final Semaphore semaphore = new Semaphore(1, true);
        /** Written only by the consumer holding the semaphore. */
        volatile long ended;
        /** The last lookup's answer or refusal, for the consumers that waited for it; null when it failed otherwise. */
        volatile Ended last;
    }

    /** What a lookup came to, for its waiters: its refusal or its consent list (one of them), and which lookup. */
    private record Ended(Refusal refusal, String list, long endedAs) {
    }

    /**
     * A consumer's turn for one {@code srvyNo}, carried by its exchange (a route variable, so the turn and its
     * release do not depend on which thread runs the steps between them): held (this consumer looks it up and
     * must {@link #release} it), not held (its wait ran out: it looks it up without a turn), or the refusal of the
     * lookup it waited for ({@link #refusal()} not null, nothing held), or its answer ({@link #answer()} not null,
     * nothing held).
     */
    public static final class Turn {
        private final String srvyNo;
        private final Lane lane;
        private final Refusal refusal;
        private final String answer;
        private final java.util.concurrent.atomic.AtomicBoolean held;
        private volatile boolean lookupEnded;

        private Turn(String srvyNo, Lane lane, Refusal refusal, String answer, boolean held) {
            this.srvyNo = srvyNo;
            this.lane = lane;
            this.refusal = refusal;
            this.answer = answer;
            this.held = new java.util.concurrent.atomic.AtomicBoolean(held);
        }

        /** The refusal of the lookup this consumer waited for, or null. */
        public Refusal refusal() {
            return refusal;
        }

        /** The consent list the lookup this consumer waited for answered (a JSON array), or null. */
        public String answer() {
            return answer;
        }
    }

    /**
     * The legacy system's refusal of a lookup (a 4xx: 404 "survey not configured"), handed to the consumers that
     * waited for that lookup: what it answered, and which downstream and step asked.
     */
    public record Refusal(HttpOperationFailedException answer, String downstream, String call) {
    }

    /** Boot's connection factory: its one shared connection is replaced when it goes silent ({@link #unavailable}). */
    private final org.springframework.beans.factory.ObjectProvider<org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory> connections;
    /**
     * Timed-out commands in a row (no answer between them) that mark the shared connection as silent: the one that
     * left the cache out and a trial's, or two under way together.
     */
    static final int SILENT_TIMEOUTS = 2;

    /** The pause after a failed command (adapter.cache.redis-pause) and a trial command's longest run (nanoseconds). */
    private final long pauseNanos;
    private final long trialNanos;
    private final java.util.function.LongSupplier nanoTime;
    /** Left out after a failure; until when (nanoTime); whether one command is trying Redis again now, on which thread. */
    private boolean paused;
    private long pausedUntil;
    private boolean trying;
    private Thread trialThread;
    /** Timed-out commands since Redis last answered (the one that paused the cache, then the trials'). */
    private int timeoutsWhilePaused;
    /** When the shared connection was last replaced (nanoTime), if ever. */
    private boolean replaced;
    private long replacedAt;
    private final io.micrometer.core.instrument.Counter skipped;

    @org.springframework.beans.factory.annotation.Autowired
    public ConsentCache(AdapterProperties properties, MeterRegistry meters, com.fasterxml.jackson.databind.ObjectMapper json,
            org.springframework.beans.factory.ObjectProvider<org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory> connections,
            org.springframework.beans.factory.ObjectProvider<org.springframework.boot.autoconfigure.data.redis.RedisProperties> redis) {
        this(properties, meters, json, connections, trialLength(redis.getIfAvailable()), System::nanoTime);
    }

    /** {@code trial}: a trial command's longest run (connect and command timeouts); {@code nanoTime}: a test's ticker. */
    ConsentCache(AdapterProperties properties, MeterRegistry meters, com.fasterxml.jackson.databind.ObjectMapper json,
            org.springframework.beans.factory.ObjectProvider<org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory> connections,
            java.time.Duration trial, java.util.function.LongSupplier nanoTime) {
        this.wholeText = json.reader().with(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        this.properties = properties;
        this.meters = meters;
        this.connections = connections;
        this.pauseNanos = properties.getCache().getRedisPause().toNanos();
        this.trialNanos = trial.toNanos();
        this.nanoTime = nanoTime;
        this.skipped = meters.counter("adapter.consent.cache", "result", "skipped");
    }

    /** Longest a command may take: connecting, then the command's own timeout (Boot's defaults: 10 s and none, 60 s). */
    private static java.time.Duration trialLength(org.springframework.boot.autoconfigure.data.redis.RedisProperties redis) {
        java.time.Duration connect = redis == null || redis.getConnectTimeout() == null ? java.time.Duration.ofSeconds(10) : redis.getConnectTimeout();
        java.time.Duration command = redis == null || redis.getTimeout() == null ? java.time.Duration.ofSeconds(60) : redis.getTimeout();
        return connect.plus(command).plusMillis(100);
    }

    /**
     * Whether the route may send its next Redis command (the filters around {@code to-redis-*}). After a failed
     * command the cache is left out for adapter.cache.redis-pause: each of a miss's three commands waited its own
     * timeout (500 ms) while Redis was slow or unreachable (at a pod's start, every worker queued behind one connect
     * attempt at a time), so a message cost more than the lookup the cache saves. Then one command tries Redis (the
     * others still skip it); once it answers ({@link #redisAnswered}), or its longest run ends without a failure, Redis
     * is used again.
     */
    public synchronized boolean usable() {
        if (!paused) {
            return true;
        }
        long now = nanoTime.getAsLong();
        if (now - pausedUntil < 0) {
            skipped.increment();
            return false;
        }
        if (trying) { // the trial ran its longest without a failure: Redis answers again
            paused = false;
            trying = false;
            timeoutsWhilePaused = 0;
            log.info("Consent cache: Redis answers again");
            return true;
        }
        trying = true;
        trialThread = Thread.currentThread();
        pausedUntil = now + trialNanos;
        return true;
    }

    /**
     * A command answered (the step after each {@code to-redis-*}; after a failed one the route's error handler has
     * run first): when it was the trial, Redis is taken back at once instead of when the trial's longest run ends.
     */
    public synchronized void redisAnswered() {
        // the trial's own thread only: after a failed command the route's error handler runs first (continued) and
        // this step still runs; a thread stalled that long must not end a later trial on the strength of a failure
        if (trying && trialThread == Thread.currentThread()) {
            pausedUntil = nanoTime.getAsLong(); // the trial's run is over: the next command closes the pause
        }
    }

    /**
     * A failed command: the cache is left out again; true when the connection is to be replaced: the second timeout in
     * a row (a silent connection), or a write refused as READONLY (the Redis it reached is a replica now: after a
     * failover behind a Service or DNS name the connection stays on the old master, demoted, and Redis keeps it open;
     * a new connection reaches the new master). Once per pause at most.
     */
    synchronized boolean pause(boolean timedOut, boolean readOnly) {
        long now = nanoTime.getAsLong();
        boolean wasPaused = paused;
        paused = true;
        trying = false;
        pausedUntil = now + pauseNanos;
        if (!wasPaused) {
            log.warn("Consent cache: a Redis command failed; Redis is left out for {}", properties.getCache().getRedisPause());
        }
        if (!(timedOut || readOnly) || (replaced && now - replacedAt < Math.max(pauseNanos, trialNanos))) {
            return false; // commands that waited on the replaced socket fail after it: not the new connection's
        }
        if (readOnly || ++timeoutsWhilePaused >= SILENT_TIMEOUTS) {
            timeoutsWhilePaused = 0;
            replaced = true;
            replacedAt = now;
            return true;
        }
        return false;
    }

    /**
     * Waits until no other consumer of this instance is looking up the message's {@code srvyNo}; bounded by twice
     * the downstream response timeout, after which it goes ahead without the turn (a second lookup costs time,
     * never correctness). When the lookup it waited for was refused by the legacy system, the turn carries that
     * refusal and is not held: without it, every waiter of a survey that is not configured asked again in turn,
     * one lookup after another, and a burst of its messages held every worker for the whole wait. The refusal is
     * not cached: only consumers that were already waiting when it was answered get it. So with an answer: the
     * waiters take it from here, not from Redis (while Redis was down, read-only or full, each waiter read a miss and
     * looked the survey up again in turn, a burst slower than with no cache at all). Takes the message, not
     * the text: Camel's bean binding would turn a {@code srvyNo} of {@code "null"} into null (a
     * NullPointerException here, every attempt a system error) and strip quotes from a quoted one.
     */
    public Turn awaitTurn(Registration msg) throws InterruptedException {
        String srvyNo = msg.srvyNo();
        Lane lane = turns.computeIfAbsent(srvyNo, k -> new Lane());
        long seen = lane.ended;
        if (lane.semaphore.hasQueuedThreads() || lane.semaphore.availablePermits() == 0) {
            meters.counter("adapter.consent.cache", "result", "shared").increment();
        }
        long waitMillis = properties.getHttp().getResponseTimeout().multipliedBy(2).toMillis();
        if (!lane.semaphore.tryAcquire(waitMillis, TimeUnit.MILLISECONDS)) {
            turns.remove(srvyNo, lane); // a stuck lookup: let the next one start afresh
            return new Turn(srvyNo, lane, null, null, false);
        }
        Ended last = lane.last;
        if (last != null && last.endedAs() > seen) {
            release(srvyNo, lane);
            return new Turn(srvyNo, lane, last.refusal(), last.list(), false);
        }
        return new Turn(srvyNo, lane, null, null, true);
    }

    /**
     * The lookup of this turn answered a consent list ({@code inbox-consents-keep-answer}, before it is cached): kept
     * for the consumers already waiting for it, and the lookup counted as ended now. A turn not held (its wait ran
     * out) keeps nothing.
     */
    public void answered(Turn turn, String list) {
        if (turn != null && turn.held.get() && !turn.lookupEnded) {
            Lane lane = turn.lane;
            lane.last = new Ended(null, list, lane.ended + 1);
            lane.ended++;
            turn.lookupEnded = true;
        }
    }

    /**
     * The lookup of this turn was refused ({@code inbox-consents-lookup-refused}): kept for the consumers already
     * waiting for it, and the lookup counted as ended now (a consumer arriving from now on asks again). The
     * failure goes on to fail this registration.
     */
    public void refused(Turn turn, HttpOperationFailedException answer, String downstream, String call) {
        if (turn != null && turn.held.get() && !turn.lookupEnded) {
            Lane lane = turn.lane;
            lane.last = new Ended(new Refusal(answer, downstream, call), null, lane.ended + 1);
            lane.ended++;
            turn.lookupEnded = true;
        }
    }

    /** Fails this registration with the refusal its consumer waited for, as if its own lookup had been refused. */
    public void share(Turn turn) throws HttpOperationFailedException {
        HttpOperationFailedException answer = turn.refusal().answer();
        throw new HttpOperationFailedException(answer.getUri(), answer.getStatusCode(), answer.getStatusText(),
                answer.getRedirectLocation(), answer.getResponseHeaders(), answer.getResponseBody());
    }

    /** Ends this turn (the route's doFinally), whatever the lookup came to; once, and only a held one. */
    public void release(Turn turn) {
        if (turn == null || !turn.held.compareAndSet(true, false)) {
            return;
        }
        Lane lane = turn.lane;
        if (!turn.lookupEnded) {
            lane.last = null; // failed otherwise (a 5xx, a timeout): nothing for the waiters to share
            lane.ended++;
        }
        release(turn.srvyNo, lane);
    }

    /** Consumers waiting for the turn of {@code srvyNo} (tests). */
    int waiting(String srvyNo) {
        Lane lane = turns.get(srvyNo);
        return lane == null ? 0 : lane.semaphore.getQueueLength();
    }

    /** Free turns of {@code srvyNo}: 0 while one is held, 1 when none is, -1 when nothing is remembered (tests). */
    int freeTurns(String srvyNo) {
        Lane lane = turns.get(srvyNo);
        return lane == null ? -1 : lane.semaphore.availablePermits();
    }

    private void release(String srvyNo, Lane lane) {
        lane.semaphore.release();
        // forgotten only when nobody waits for it and nobody took it meanwhile: a consumer woken by this release may
        // already hold it and have left the queue, and a new lane beside it would run a second lookup
        if (!lane.semaphore.hasQueuedThreads() && lane.semaphore.availablePermits() > 0) {
            turns.remove(srvyNo, lane);
        }
    }

    /** Boot's ObjectMapper: a cached list is only read as a tree, to tell a JSON array from anything else. */
    /** Reads the whole text: an array followed by anything else ("[]<html>…", two values) is not one (made once: every hit reads it). */
    private final com.fasterxml.jackson.databind.ObjectReader wholeText;

    /**
     * The legacy system's answer as it is cached and sent on in the bundle: a JSON array (CONTRACT §3:
     * {@code 200 [ {…}, … ]}). Anything else — a gateway's page, a truncated body, an object, {@code null} (which the
     * bean binding reads as no consents at all: questionnaires sent without their consent forms) — was cached for
     * the TTL and shared by every pod; now it fails this registration as a system error and is not cached.
     */
    public String list(String answer) {
        if (!isList(answer)) {
            throw new com.hospital.surveyinbox.processing.SystemException("legacy", "the consent lookup's answer is not a JSON array", null);
        }
        return answer;
    }

    /**
     * Whether a text is a JSON array: what the cache may answer with. A cached value that is not (written by a pod
     * of an older release during a rollout) is read as a miss, and the lookup's answer replaces it.
     */
    public boolean isList(String text) {
        try {
            return text != null && wholeText.readTree(text) instanceof com.fasterxml.jackson.databind.node.ArrayNode;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /** TTL of a cached list, in seconds (the unit of Redis SETEX). */
    public long ttlSeconds() {
        return Math.max(1, properties.getCache().getConsentTtl().toSeconds());
    }

    public void hit() {
        meters.counter("adapter.consent.cache", "result", "hit").increment();
    }

    public void miss() {
        meters.counter("adapter.consent.cache", "result", "miss").increment();
    }

    /**
     * Whether a failure is Redis's (the route's inbox-consents-redis-failed policy): Spring's or Lettuce's exception
     * anywhere in its causes. Asked by the policy rather than matched by class: Camel takes the policy closest by
     * class level, on a tie the innermost cause's, and Spring wraps what Lettuce does not know (a connection reset
     * under a command: RedisSystemException around the IOException, three levels against one). Not a thread
     * interrupted in a command (shutdown): Lettuce sets the flag again, the next wait would fail anyway, and taking it
     * for Redis down would leave Redis out for every worker of the pod.
     */
    public boolean isRedisFailure(Exception failure) {
        return !causedBy(failure, InterruptedException.class)
                && (causedBy(failure, org.springframework.dao.DataAccessException.class)
                        || causedBy(failure, io.lettuce.core.RedisException.class));
    }

    /**
     * A Redis failure: a warning and a miss, never a processing failure; Redis is left out for a pause
     * ({@link #usable}) — except a command Redis refuses while it answers (OOM, MISCONF, NOPERM, WRONGTYPE:
     * {@link #commandRefusal}): Redis stays in use. Commands that time out in a row ({@link #SILENT_TIMEOUTS}, e.g. the one that paused the
     * cache and the trial after the pause), or a write refused as READONLY, replace Boot's shared connection: Lettuce does not
     * reconnect on a command timeout, and a connection gone silent (a failover or a partition that drops packets:
     * no close, no reset) stayed "connected" until the kernel gave up, about 15 minutes, every command waiting
     * its whole timeout while a new connection would have reached the new Redis at once.
     */
    public void unavailable(Exception failure) {
        meters.counter("adapter.consent.cache", "result", "error").increment();
        String refusal = commandRefusal(failure);
        if (refusal != null) {
            // Redis answers: only this command is refused (a write under maxmemory, a failed save, an ACL, a key of
            // another type). Leaving Redis out would also skip reads of the lists it holds, and every message would
            // look its survey up again; a key of another type is overwritten by the SETEX after the lookup
            log.warn("Consent cache: Redis refused a command ({}); going on without it for this message", refusal);
            return;
        }
        log.warn("Consent cache unavailable, going on without it: {}", failure.getClass().getSimpleName());
        boolean readOnly = causedBy(failure, io.lettuce.core.RedisReadOnlyException.class);
        if (pause(causedBy(failure, io.lettuce.core.RedisCommandTimeoutException.class), readOnly) && connections != null) {
            var factory = connections.getIfAvailable();
            if (factory != null) {
                meters.counter("adapter.consent.cache.reconnects", "reason", readOnly ? "readonly" : "silent").increment();
                reconnect(factory, readOnly ? "a write was refused as READONLY (a replica)" : SILENT_TIMEOUTS + " Redis commands timed out in a row");
            }
        }
    }

    /**
     * Drops the shared connection's channel, as a broken socket would: Lettuce's watchdog (auto-reconnect) opens a
     * new one at once, and commands meanwhile are rejected (a miss), never queued. Spring's resetConnection() did
     * not do it (the next command still went out on the silent socket), so this reaches Lettuce's endpoint under
     * its writers (CommandExpiryWriter with Boot's command timeout); SilentRedisTest fails if that changes.
     */
    private static void reconnect(org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory factory, String why) {
        try (var connection = factory.getConnection()) {
            if (connection.getNativeConnection() instanceof io.lettuce.core.api.async.RedisAsyncCommands<?, ?> commands
                    && commands.getStatefulConnection() instanceof io.lettuce.core.RedisChannelHandler<?, ?> handler) {
                io.lettuce.core.RedisChannelWriter writer = handler.getChannelWriter();
                while (!(writer instanceof io.lettuce.core.protocol.DefaultEndpoint)) {
                    if (writer instanceof io.lettuce.core.protocol.CommandExpiryWriter expiry) {
                        writer = expiry.getDelegate();
                    } else if (writer instanceof io.lettuce.core.CommandListenerWriter listener) {
                        writer = listener.getDelegate();
                    } else {
                        log.warn("Consent cache: the Redis connection cannot be replaced ({})", writer.getClass().getName());
                        return;
                    }
                }
                ((io.lettuce.core.protocol.DefaultEndpoint) writer).disconnect();
                log.warn("Consent cache: {}; its connection is replaced", why);
            } else {
                // a cluster or master/replica connection: not replaced here (standalone and Sentinel are)
                log.warn("Consent cache: {}; this kind of connection cannot be replaced", why);
            }
        } catch (RuntimeException e) {
            log.warn("Consent cache: the Redis connection could not be replaced: {}", e.getClass().getSimpleName());
        }
    }

    /** Error replies of a Redis that answers, refusing one command; the others (LOADING, BUSY, …) leave it out. */
    static final java.util.Set<String> COMMAND_REFUSALS = java.util.Set.of("OOM", "MISCONF", "NOPERM", "WRONGTYPE");

    /** The error code of a command Redis refused ({@link #COMMAND_REFUSALS}: its reply's first word), else null. */
    static String commandRefusal(Throwable failure) {
        io.lettuce.core.RedisCommandExecutionException refused =
                org.apache.camel.util.ObjectHelper.getException(io.lettuce.core.RedisCommandExecutionException.class, failure);
        if (refused == null || refused instanceof io.lettuce.core.RedisReadOnlyException || refused.getMessage() == null) {
            return null;
        }
        String code = refused.getMessage().strip().split("\\s+", 2)[0];
        return COMMAND_REFUSALS.contains(code) ? code : null;
    }

    private static boolean causedBy(Throwable failure, Class<? extends Throwable> type) {
        return org.apache.camel.util.ObjectHelper.getException(type, failure) != null;
    }
}
