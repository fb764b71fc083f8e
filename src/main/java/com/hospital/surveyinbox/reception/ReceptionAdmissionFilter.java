package com.hospital.surveyinbox.reception;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.Semaphore;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * At most {@code adapter.reception.max-in-flight} receptions at once per pod; one more is answered at once with the
 * contract's 503 "nothing stored, please retry" (Retry-After, X-Result-Code N), before its body is read. A database
 * that slows down holds each reception up to its store timeout: above a pod's 200 request threads, Tomcat queued
 * 100 more and then closed connections unanswered, so the sender got the ingress's 502 page (no X-Result-Code, a
 * status the contract never names) and the operators' API on the same threads stopped answering during exactly
 * that incident. The permits stay below Tomcat's threads: the rest serve {@code /ops}.
 */
public class ReceptionAdmissionFilter extends OncePerRequestFilter {

    private final Semaphore permits;
    private final ReceptionReplyWriter writer;
    private final ReceptionReplies replies;
    private final Counter overloaded;

    public ReceptionAdmissionFilter(int maxInFlight, int requestThreads, ReceptionReplyWriter writer,
                                    ReceptionReplies replies, MeterRegistry meters) {
        if (maxInFlight >= requestThreads) {
            // refused in the prod profile (ProductionSafetyCheck); a test's or a developer's tiny Tomcat still starts
            org.slf4j.LoggerFactory.getLogger(ReceptionAdmissionFilter.class).warn(
                    "adapter.reception.max-in-flight ({}) is not below server.tomcat.threads.max ({}): receptions waiting on a "
                            + "slow database can hold every request thread, the operators' API behind them", maxInFlight, requestThreads);
        }
        this.permits = new Semaphore(maxInFlight);
        this.writer = writer;
        this.replies = replies;
        this.overloaded = Counter.builder("adapter.reception.overloaded")
                .description("receptions answered 503 because adapter.reception.max-in-flight were under way").register(meters);
        Gauge.builder("adapter.reception.in.flight", permits, p -> maxInFlight - p.availablePermits())
                .description("receptions under way now (at most adapter.reception.max-in-flight)").register(meters);
    }

    /** Only receptions (POSTs) take a permit. */
    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !"POST".equals(request.getMethod());
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (!permits.tryAcquire()) {
            overloaded.increment();
            writer.pleaseRetry(response, "too many receptions under way; nothing stored, please retry", replies);
            return;
        }
        try {
            chain.doFilter(request, response);
        } finally {
            permits.release();
        }
    }
}
