package com.hospital.surveyinbox.reception;

import com.hospital.surveyinbox.config.AdapterProperties;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A token bucket per authenticated sender on the reception endpoint (OWASP API4, unrestricted resource
 * consumption): {@code per-second} sustained, {@code burst} at once; beyond that 429 with Retry-After and
 * nothing stored. Per instance; the legacy system's normal bulk bursts stay far below the default.
 */
public class SenderRateLimitFilter extends OncePerRequestFilter {

    private final AdapterProperties properties;
    private final ReceptionReplyWriter writer;
    private final MeterRegistry meters;
    private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

    public SenderRateLimitFilter(AdapterProperties properties, ReceptionReplyWriter writer, MeterRegistry meters) {
        this.properties = properties;
        this.writer = writer;
        this.meters = meters;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        AdapterProperties.RateLimit limit = properties.getReception().getRateLimit();
        Authentication auth = SecurityContextHolder.getContext().getAuthentication();
        if (!limit.isEnabled() || auth == null || !"POST".equals(request.getMethod())) {
            chain.doFilter(request, response);
            return;
        }
        Bucket bucket = buckets.computeIfAbsent(auth.getName(), k -> new Bucket(limit.getBurst()));
        if (!bucket.take(limit.getPerSecond(), limit.getBurst())) {
            meters.counter("adapter.reception.rate-limited").increment();
            response.setHeader("Retry-After", "1");
            writer.write(response, 429, "too many requests from this sender; retry shortly");
            return;
        }
        chain.doFilter(request, response);
    }

    /** Refills continuously at {@code perSecond}, holds at most {@code burst}. */
    static final class Bucket {
        private double tokens;
        private long last = System.nanoTime();

        Bucket(int burst) {
            this.tokens = burst;
        }

        synchronized boolean take(int perSecond, int burst) {
            long now = System.nanoTime();
            tokens = Math.min(burst, tokens + (now - last) / 1e9 * perSecond);
            last = now;
            if (tokens >= 1) {
                tokens -= 1;
                return true;
            }
            return false;
        }
    }
}
