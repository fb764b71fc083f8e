package com.hospital.surveyinbox.config;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.io.IOException;
import org.slf4j.MDC;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * A request starts and ends with an empty MDC on its thread. Camel puts a traced route's {@code trace_id} and
 * {@code span_id} into the MDC ({@code camel.main.use-mdc-logging}) and, when the route goes on on another thread
 * (the Kafka producer's, after an operator's requeue publishes), leaves them on the request thread: every later line
 * of that pooled thread — a reception's "Inbox unavailable", untraced by design — was written under the operator's
 * trace, and the log pattern prints Camel's {@code trace_id} before Boot's {@code traceId}
 * (RequestThreadTraceTest). First of all filters: nothing of this request is in the MDC yet.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
public class RequestThreadMdc implements Filter {

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        MDC.clear();
        try {
            chain.doFilter(request, response);
        } finally {
            MDC.clear();
        }
    }
}
