package com.hospital.surveyinbox.cache;

import com.hospital.surveyinbox.config.AdapterProperties;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Component;

/**
 * The consent-lookup cache policy (case study §4.4), in one place:
 * <ul>
 *   <li>key = prefix + srvyNo, value = the legacy JSON array as received, TTL {@code adapter.cache.consent-ttl};</li>
 *   <li>empty lists are cached — surveys without consents are the norm, so this is most of the saving;</li>
 *   <li>a failed lookup (404 "survey not configured", 5xx) is never cached: a fixed configuration must
 *       take effect at the next attempt;</li>
 *   <li>a Redis failure is a warning, never a processing failure: the lookup is made directly;</li>
 *   <li>concurrent misses for one srvyNo in this instance share one lookup (messages of one survey
 *       arrive together, so without this the first burst would pay the 1 s lookup once per consumer).</li>
 * </ul>
 */
@Component("consentCache")
public class ConsentCache {

    private static final Logger log = LoggerFactory.getLogger(ConsentCache.class);

    private final StringRedisTemplate redis;
    private final AdapterProperties properties;
    private final MeterRegistry meters;
    private final ConcurrentHashMap<String, CompletableFuture<String>> inFlight = new ConcurrentHashMap<>();

    public ConsentCache(StringRedisTemplate redis, AdapterProperties properties, MeterRegistry meters) {
        this.redis = redis;
        this.properties = properties;
        this.meters = meters;
    }

    /** The consent list of {@code srvyNo} (JSON array text), from Redis or from {@code lookup}. */
    public String consents(String srvyNo, Supplier<String> lookup) {
        String cached = read(srvyNo);
        if (cached != null) {
            meters.counter("adapter.consent.cache", "result", "hit").increment();
            return cached;
        }
        CompletableFuture<String> mine = new CompletableFuture<>();
        CompletableFuture<String> leader = inFlight.putIfAbsent(srvyNo, mine);
        if (leader != null) {
            meters.counter("adapter.consent.cache", "result", "shared").increment();
            try {
                return leader.join();
            } catch (CompletionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : e;
            }
        }
        try {
            String again = read(srvyNo); // another instance or a leader that just finished may have filled it
            if (again != null) {
                meters.counter("adapter.consent.cache", "result", "hit").increment();
                mine.complete(again);
                return again;
            }
            meters.counter("adapter.consent.cache", "result", "miss").increment();
            String fresh = lookup.get();
            write(srvyNo, fresh);
            mine.complete(fresh);
            return fresh;
        } catch (RuntimeException e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            inFlight.remove(srvyNo, mine);
        }
    }

    /** Drops a cached list (operators, tests). */
    public void evict(String srvyNo) {
        try {
            redis.delete(key(srvyNo));
        } catch (RuntimeException e) {
            log.warn("Consent cache evict failed for srvyNo {}: {}", srvyNo, e.toString());
        }
    }

    private String read(String srvyNo) {
        try {
            return redis.opsForValue().get(key(srvyNo));
        } catch (RuntimeException e) {
            meters.counter("adapter.consent.cache", "result", "error").increment();
            log.warn("Consent cache unavailable, calling the legacy system directly (srvyNo {}): {}", srvyNo, e.toString());
            return null;
        }
    }

    private void write(String srvyNo, String value) {
        try {
            redis.opsForValue().set(key(srvyNo), value, properties.getCache().getConsentTtl());
        } catch (RuntimeException e) {
            meters.counter("adapter.consent.cache", "result", "error").increment();
            log.warn("Consent cache write failed (srvyNo {}): {}", srvyNo, e.toString());
        }
    }

    private String key(String srvyNo) {
        return properties.getCache().getKeyPrefix() + srvyNo;
    }
}
