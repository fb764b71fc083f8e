package com.hospital.surveyinbox.cache;

import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.processing.Registration;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
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
    private final ConcurrentHashMap<String, Semaphore> turns = new ConcurrentHashMap<>();
    /** The turn this thread holds (the route runs awaitTurn, the lookup and release on one thread). */
    private final ThreadLocal<Turn> held = new ThreadLocal<>();

    private record Turn(String srvyNo, Semaphore semaphore) {
    }

    public ConsentCache(AdapterProperties properties, MeterRegistry meters) {
        this.properties = properties;
        this.meters = meters;
    }

    /**
     * Waits until no other consumer of this instance is looking up the message's {@code srvyNo}; bounded by twice
     * the downstream response timeout, after which it goes ahead (a second lookup costs time, never correctness).
     * Takes the message, not the text: Camel's bean binding would turn a {@code srvyNo} of {@code "null"} into null
     * (a NullPointerException here, every attempt a system error) and strip quotes from a quoted one.
     */
    public void awaitTurn(Registration msg) throws InterruptedException {
        String srvyNo = msg.srvyNo();
        Semaphore turn = turns.computeIfAbsent(srvyNo, k -> new Semaphore(1));
        if (turn.hasQueuedThreads() || turn.availablePermits() == 0) {
            meters.counter("adapter.consent.cache", "result", "shared").increment();
        }
        long waitMillis = properties.getHttp().getResponseTimeout().multipliedBy(2).toMillis();
        if (turn.tryAcquire(waitMillis, TimeUnit.MILLISECONDS)) {
            held.set(new Turn(srvyNo, turn));
        } else {
            turns.remove(srvyNo, turn); // a stuck lookup: let the next one start afresh
        }
    }

    /** Ends this consumer's turn (the route's doFinally), whatever the lookup came to. */
    public void release() {
        Turn turn = held.get();
        held.remove();
        if (turn != null) {
            turn.semaphore().release();
            if (!turn.semaphore().hasQueuedThreads()) {
                turns.remove(turn.srvyNo(), turn.semaphore());
            }
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
