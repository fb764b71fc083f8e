package com.hospital.surveyinbox.config;

import com.hospital.surveyinbox.reception.ReceptionReplyWriter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Limits failed Basic authentications per client address ({@code adapter.security.auth-failures}), ahead
 * of Spring Security: each 401 takes a token from the address's bucket; an address with none left gets 429
 * for every request, valid credentials included, so a guesser learns nothing from the answers; exempt
 * addresses (the legacy sender's) are never limited. Per instance.
 */
public class AuthFailureLimitFilter extends OncePerRequestFilter {

    /** Buckets kept at most; beyond it the oldest are dropped (a scan from many addresses cannot grow memory). */
    static final int MAX_ADDRESSES = 10_000;

    private final AdapterProperties.AuthFailures limit;
    private final ReceptionReplyWriter writer;
    private final MeterRegistry meters;
    private final ConcurrentHashMap<String, TokenBucket> buckets = new ConcurrentHashMap<>();

    public AuthFailureLimitFilter(AdapterProperties.AuthFailures limit, ReceptionReplyWriter writer, MeterRegistry meters) {
        this.limit = limit;
        this.writer = writer;
        this.meters = meters;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String address = request.getRemoteAddr();
        if (!limit.isEnabled() || limit.getExemptAddresses().contains(address)) {
            chain.doFilter(request, response);
            return;
        }
        TokenBucket bucket = buckets.get(address);
        if (bucket != null && !bucket.hasToken()) {
            meters.counter("adapter.security.auth-limited").increment();
            response.setHeader("Retry-After", Long.toString(bucket.secondsToNextToken()));
            writer.write(response, 429, "too many failed authentications from this address; retry later");
            return;
        }
        chain.doFilter(request, response);
        if (response.getStatus() == HttpServletResponse.SC_UNAUTHORIZED) {
            if (buckets.size() >= MAX_ADDRESSES) {
                buckets.clear();
            }
            buckets.computeIfAbsent(address, a -> new TokenBucket(limit.getBurst(), limit.getPerMinute() / 60.0)).take();
        }
    }
}
