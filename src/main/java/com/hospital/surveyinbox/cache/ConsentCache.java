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
 * camel-spring-redis over Boot's {@link StringRedisTemplate} ({@code camel.component.spring-redis.redis-template}).
 */
@Component("consentCache")
public class ConsentCache {

    private static final Logger log = LoggerFactory.getLogger(ConsentCache.class);

    private final AdapterProperties properties;
    private final MeterRegistry meters;
    private final ConcurrentHashMap<String, Lane> turns = new ConcurrentHashMap<>();
    /** The turn this thread holds (the route runs awaitTurn, the lookup and release on one thread). */
    private final ThreadLocal<Turn> held = new ThreadLocal<>();

    private record Turn(String srvyNo, Lane lane) {
    }

    /** One srvyNo's lookups in this instance: the turn, how many lookups ended, and the last one's refusal. */
    private static final class Lane {
        final Semaphore semaphore = new Semaphore(1);
        volatile long ended;
        volatile Refusal refusal;
    }

    /**
     * The legacy system's refusal of a lookup (a 4xx: 404 "survey not configured"), handed to the consumers that
     * waited for that lookup: what it answered, and which downstream and step asked.
     */
    public record Refusal(HttpOperationFailedException answer, String downstream, String call, long endedAs) {
    }

    public ConsentCache(AdapterProperties properties, MeterRegistry meters) {
        this.properties = properties;
        this.meters = meters;
    }

    /**
     * Waits until no other consumer of this instance is looking up the message's {@code srvyNo}; bounded by twice
     * the downstream response timeout, after which it goes ahead (a second lookup costs time, never correctness).
     * Returns the refusal of the lookup this consumer waited for, if the legacy system refused it (then the turn
     * is not held: nothing to release); else null and this consumer holds the turn. Without that, every waiter
     * of a survey that is not configured asked again in turn, one lookup after another, and a burst of its
     * messages held every worker for the whole wait. The refusal is not cached: it goes only to consumers that
     * were waiting while it was answered. Takes the message, not the text: Camel's bean binding would turn a
     * {@code srvyNo} of {@code "null"} into null (a NullPointerException here, every attempt a system error) and
     * strip quotes from a quoted one.
     */
    public Refusal awaitTurn(Registration msg) throws InterruptedException {
        String srvyNo = msg.srvyNo();
        Lane lane = turns.computeIfAbsent(srvyNo, k -> new Lane());
        long seen = lane.ended;
        if (lane.semaphore.hasQueuedThreads() || lane.semaphore.availablePermits() == 0) {
            meters.counter("adapter.consent.cache", "result", "shared").increment();
        }
        long waitMillis = properties.getHttp().getResponseTimeout().multipliedBy(2).toMillis();
        if (!lane.semaphore.tryAcquire(waitMillis, TimeUnit.MILLISECONDS)) {
            turns.remove(srvyNo, lane); // a stuck lookup: let the next one start afresh
            return null;
        }
        Refusal refusal = lane.refusal;
        if (refusal != null && refusal.endedAs() > seen) {
            release(srvyNo, lane);
            return refusal;
        }
        held.set(new Turn(srvyNo, lane));
        return null;
    }

    /**
     * The lookup of the turn this consumer holds was refused ({@code inbox-consents-lookup-refused}): kept for the
     * consumers waiting for it. The failure goes on to fail this registration.
     */
    public void refused(HttpOperationFailedException answer, String downstream, String call) {
        Turn turn = held.get();
        if (turn != null) {
            Lane lane = turn.lane();
            lane.refusal = new Refusal(answer, downstream, call, lane.ended + 1);
        }
    }

    /** Fails this registration with the refusal its consumer waited for, as if its own lookup had been refused. */
    public void share(Refusal refusal) throws HttpOperationFailedException {
        HttpOperationFailedException answer = refusal.answer();
        throw new HttpOperationFailedException(answer.getUri(), answer.getStatusCode(), answer.getStatusText(),
                answer.getRedirectLocation(), answer.getResponseHeaders(), answer.getResponseBody());
    }

    /** Ends this consumer's turn (the route's doFinally), whatever the lookup came to. */
    public void release() {
        Turn turn = held.get();
        held.remove();
        if (turn != null) {
            Lane lane = turn.lane();
            if (lane.refusal == null || lane.refusal.endedAs() != lane.ended + 1) {
                lane.refusal = null; // answered, or failed otherwise: nothing for the waiters to share
            }
            lane.ended++;
            release(turn.srvyNo(), lane);
        }
    }

    private void release(String srvyNo, Lane lane) {
        lane.semaphore.release();
        if (!lane.semaphore.hasQueuedThreads()) {
            turns.remove(srvyNo, lane);
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

    /** A Redis failure: a warning and a miss, never a processing failure. */
    public void unavailable(Exception failure) {
        meters.counter("adapter.consent.cache", "result", "error").increment();
        log.warn("Consent cache unavailable, going on without it: {}", failure.getClass().getSimpleName());
    }
}
