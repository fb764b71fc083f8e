package com.hospital.surveyinbox.config;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.Semaphore;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * At most {@code adapter.security.ops-max-in-flight} operator requests at once per pod; one more is answered 503 with
 * {@code Retry-After} before its body is read. The receptions have their own bound
 * ({@code adapter.reception.max-in-flight}) and their own pool; nothing bounded the operators' API, and each of its
 * requests holds a request thread and most a main-pool connection: a loop of bulk counts over a large DEAD set (an
 * operator's script, a stuck console reloading) took the threads receptions need and the connections workers need.
 * Registered after Spring Security: only an operator (or viewer) is counted.
 */
public class OpsAdmissionFilter extends OncePerRequestFilter {

    private final Semaphore admitted;
    private final int limit;

    public OpsAdmissionFilter(int limit) {
        this.limit = limit;
        this.admitted = new Semaphore(limit);
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (!admitted.tryAcquire()) {
            response.setHeader("Retry-After", "2");
            OpsBodyLimitFilter.writeError(response, 503, "operator API busy: more than " + limit
                    + " requests at once on this pod; please retry");
            return;
        }
        try {
            chain.doFilter(request, response);
        } finally {
            // the routes answer on the request thread (platform-http here dispatches no async cycle): the permit
            // lasts until the answer (InboxOpsRouteTest holds requeues on a locked row and sees the bound)
            admitted.release();
        }
    }
}
