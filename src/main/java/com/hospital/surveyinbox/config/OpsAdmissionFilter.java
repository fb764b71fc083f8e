package com.hospital.surveyinbox.config;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.Semaphore;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * At most {@code adapter.security.ops-max-in-flight} operator API reads and, apart from them,
 * {@code adapter.security.ops-max-writes-in-flight} writes at once per pod; one more is answered 503 with
 * {@code Retry-After} at once ({@code adapter_ops_overloaded_total{kind}}). The receptions have their own bound
 * ({@code adapter.reception.max-in-flight}) and their own pool; nothing bounded the operators' API, and each of its
 * requests holds a request thread and most a main-pool connection: a loop of reads or bulk counts (a script, a stuck
 * console reloading) took the threads receptions need and the connections workers need. Reads and writes apart: a
 * viewer's reads never leave an operator's requeue without room. The API only ({@code /ops/inbox}), after its body
 * was read ({@link OpsBodyLimitFilter}): the console's files and the API description are not counted, and a body still
 * arriving holds no permit. A bulk requeue's count (a POST dry run) is a write. The routes answer on the request thread (platform-http here dispatches no async cycle),
 * so a permit lasts until the answer.
 */
public class OpsAdmissionFilter extends OncePerRequestFilter {

    private final Semaphore reads;
    private final Semaphore writes;
    private final int readLimit;
    private final int writeLimit;
    private final Counter readsRefused;
    private final Counter writesRefused;

    public OpsAdmissionFilter(int readLimit, int writeLimit, MeterRegistry meters) {
        this.readLimit = readLimit;
        this.writeLimit = writeLimit;
        this.reads = new Semaphore(readLimit);
        this.writes = new Semaphore(writeLimit);
        this.readsRefused = Counter.builder("adapter.ops.overloaded").tag("kind", "read")
                .description("operator API requests answered 503: adapter.security.ops-max-in-flight reads (or "
                        + "ops-max-writes-in-flight writes) were under way").register(meters);
        this.writesRefused = Counter.builder("adapter.ops.overloaded").tag("kind", "write")
                .description("operator API requests answered 503: adapter.security.ops-max-in-flight reads (or "
                        + "ops-max-writes-in-flight writes) were under way").register(meters);
        io.micrometer.core.instrument.Gauge.builder("adapter.ops.in.flight", this, OpsAdmissionFilter::readsInFlight)
                .tag("kind", "read").description("operator API requests under way now").register(meters);
        io.micrometer.core.instrument.Gauge.builder("adapter.ops.in.flight", this, OpsAdmissionFilter::writesInFlight)
                .tag("kind", "write").description("operator API requests under way now").register(meters);
    }

    /** Operator API reads under way now. */
    public int readsInFlight() {
        return readLimit - reads.availablePermits();
    }

    /** Operator API writes under way now. */
    public int writesInFlight() {
        return writeLimit - writes.availablePermits();
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        boolean read = "GET".equals(request.getMethod()) || "HEAD".equals(request.getMethod());
        Semaphore permits = read ? reads : writes;
        if (!permits.tryAcquire()) {
            (read ? readsRefused : writesRefused).increment();
            response.setHeader("Retry-After", "2");
            OpsBodyLimitFilter.writeError(response, 503, "operator API busy: " + (read ? readLimit + " reads" : writeLimit + " writes")
                    + " under way on this pod; please retry");
            return;
        }
        try {
            chain.doFilter(request, response);
        } finally {
            permits.release();
        }
    }
}
