package com.hospital.surveyinbox.reception;

import com.hospital.surveyinbox.config.TokenBucket;
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
 * consumption): {@code per-second} sustained, {@code burst} at once; beyond that 503 with Retry-After and
 * nothing stored: the contract's "please retry" (its only status the sender retries; a 429 it was never told of
 * could end a message's delivery on its side). Per instance; the legacy system's normal bulk bursts stay far
 * below the default.
 */
public class SenderRateLimitFilter extends OncePerRequestFilter {

    private final AdapterProperties properties;
    private final ReceptionReplyWriter writer;
    private final ReceptionReplies replies;
    private final io.micrometer.core.instrument.Counter limited;
    private final ConcurrentHashMap<String, TokenBucket> buckets = new ConcurrentHashMap<>();

    public SenderRateLimitFilter(AdapterProperties properties, ReceptionReplyWriter writer, ReceptionReplies replies,
                                 MeterRegistry meters) {
        this.properties = properties;
        this.writer = writer;
        this.replies = replies;
        // at zero from the start, and each 503 timed among the reception's 503s: the unavailable alert and the SLO
        // see a sender retrying against its limit
        this.limited = meters.counter("adapter.reception.rate-limited");
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
        TokenBucket bucket = buckets.computeIfAbsent(auth.getName(), k -> new TokenBucket(limit.getBurst(), limit.getPerSecond()));
        if (!bucket.tryTake()) {
            limited.increment();
            writer.pleaseRetry(response, "too many requests from this sender; nothing stored, please retry", replies);
            return;
        }
        chain.doFilter(request, response);
    }
}
