package com.hospital.surveyinbox.config;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.stereotype.Component;

/**
 * Failed Basic authentications per client address ({@code adapter.security.auth-failures}), on the public
 * and the management port alike (both run the one security filter chain; {@link SecurityConfig} asks here
 * when credentials were wrong). Design, and why:
 * <ul>
 *   <li><b>Throttle wrong credentials, never refuse right ones.</b> Each wrong credential takes a token from
 *       its address's bucket; with none left, a wrong credential gets 429 instead of 401. A request whose
 *       credentials are right always passes. So nobody can lock the legacy sender (or an operator) out by
 *       failing from its address, from a shared NAT or ingress address, or with its user name — the old
 *       "429 for everything from a limited address" let any client behind the same address stop receptions.
 *       What keeps a guesser out is the secrets' length (the prod profile refuses shorter than 16 characters:
 *       beyond reach of online guessing); the limit slows a guesser, counts it
 *       ({@code adapter_security_auth_limited_total}) and keeps its noise per address.</li>
 *   <li><b>Bounded in size and time.</b> An address is forgotten once its bucket has refilled (it then holds
 *       no more than a new one). At most {@code max-addresses} are remembered; beyond that, new addresses
 *       share one overflow bucket, so a flood of addresses limits itself and never evicts — resets — the
 *       limit of an address already counted.</li>
 * </ul>
 * Per instance.
 */
@Component("authFailureLimiter")
public class AuthFailureLimiter {

    private static final long PURGE_EVERY_NANOS = 1_000_000_000L;

    private final AdapterProperties.AuthFailures limit;
    private final MeterRegistry meters;
    private final ConcurrentHashMap<String, TokenBucket> buckets = new ConcurrentHashMap<>();
    private final TokenBucket overflow;
    private final AtomicLong lastPurge = new AtomicLong(System.nanoTime());

    @org.springframework.beans.factory.annotation.Autowired
    public AuthFailureLimiter(AdapterProperties properties, MeterRegistry meters) {
        this(properties.getSecurity().getAuthFailures(), meters);
    }

    AuthFailureLimiter(AdapterProperties.AuthFailures limit, MeterRegistry meters) {
        this.limit = limit;
        this.meters = meters;
        this.overflow = newBucket();
        meters.gauge("adapter.security.auth-failure.addresses", buckets, ConcurrentHashMap::size);
    }

    /**
     * A wrong credential from {@code address}: counted; true when the address had no failure left (answer 429,
     * not 401). Right credentials never come here.
     */
    public boolean failed(String address) {
        if (!limit.isEnabled()) {
            return false;
        }
        TokenBucket bucket = bucketOf(address);
        if (bucket.tryTake()) {
            return false;
        }
        meters.counter("adapter.security.auth-limited").increment();
        return true;
    }

    /** Whole seconds until {@code address} may fail again. */
    public long retryAfterSeconds(String address) {
        TokenBucket bucket = buckets.get(address);
        return (bucket == null ? overflow : bucket).secondsToNextToken();
    }

    /** Addresses currently remembered. */
    int size() {
        return buckets.size();
    }

    private TokenBucket bucketOf(String address) {
        TokenBucket bucket = buckets.get(address);
        if (bucket != null) {
            return bucket;
        }
        if (buckets.size() >= limit.getMaxAddresses()) {
            purgeRefilled();
            if (buckets.size() >= limit.getMaxAddresses()) {
                return overflow;
            }
        }
        return buckets.computeIfAbsent(address, a -> newBucket());
    }

    /** Forgets addresses that earned all their failures back: at most once a second, never a counted one. */
    private void purgeRefilled() {
        long last = lastPurge.get();
        long now = System.nanoTime();
        if (now - last >= PURGE_EVERY_NANOS && lastPurge.compareAndSet(last, now)) {
            buckets.values().removeIf(TokenBucket::isFull);
        }
    }

    private TokenBucket newBucket() {
        return new TokenBucket(limit.getBurst(), limit.getPerMinute() / 60.0);
    }
}
