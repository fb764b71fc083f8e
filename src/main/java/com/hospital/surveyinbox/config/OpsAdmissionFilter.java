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

    private final Room reads;
    private final Room writes;

    /** One kind's permits, with its meters: the count under way and the requests refused. */
    private static final class Room {
        final String kind;
        final int limit;
        final Semaphore permits;
        final Counter refused;

        Room(String kind, int limit, MeterRegistry meters) {
            this.kind = kind;
            this.limit = limit;
            this.permits = new Semaphore(limit);
            this.refused = Counter.builder("adapter.ops.overloaded").tag("kind", kind)
                    .description("operator API requests answered 503: adapter.security.ops-max-in-flight reads (or "
                            + "ops-max-writes-in-flight writes) were under way").register(meters);
            io.micrometer.core.instrument.Gauge.builder("adapter.ops.in.flight", this, Room::inFlight)
                    .tag("kind", kind).description("operator API requests under way now").register(meters);
        }

        int inFlight() {
            return limit - permits.availablePermits();
        }
    }

    public OpsAdmissionFilter(int readLimit, int writeLimit, MeterRegistry meters) {
        this.reads = new Room("read", readLimit, meters);
        this.writes = new Room("write", writeLimit, meters);
    }

    /** Operator API reads under way now. */
    public int readsInFlight() {
        return reads.inFlight();
    }

    /** Operator API writes under way now. */
    public int writesInFlight() {
        return writes.inFlight();
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        Room room = OpsBodyLimitFilter.isRead(request) ? reads : writes;
        Semaphore permits = room.permits;
        if (!permits.tryAcquire()) {
            room.refused.increment();
            response.setHeader("Retry-After", "2");
            OpsBodyLimitFilter.writeError(response, 503, "operator API busy: " + room.limit + " " + room.kind + "s"
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
