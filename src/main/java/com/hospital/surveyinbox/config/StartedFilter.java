package com.hospital.surveyinbox.config;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The routes' paths before the service is started: Tomcat takes connections seconds before Camel has started the
 * routes (and their platform-http endpoints). Spring MVC would answer 404 there, which a sender may take for
 * "this endpoint does not exist" and an operator for "no such row"; until the application is ready (the moment
 * readiness turns UP, after Camel's start) this answers 503 with Retry-After instead, in the shape the path's
 * callers read ({@link Answer}: the contract's "nothing stored, please retry" on the reception, a JSON error on
 * the operator API). In Kubernetes the readiness probe keeps such a pod out of the Service; this covers whoever
 * reaches the pod directly (a port-forward, the local run). Latched: at shutdown Tomcat stops taking requests
 * before Camel stops.
 */
public class StartedFilter extends OncePerRequestFilter implements ApplicationListener<ApplicationReadyEvent> {

    /** Writes the 503 of a request that came too early. */
    @FunctionalInterface
    public interface Answer {
        void starting(HttpServletResponse response) throws IOException;
    }

    private final Answer answer;
    private volatile boolean started;

    public StartedFilter(Answer answer) {
        this.answer = answer;
    }

    @Override
    public void onApplicationEvent(ApplicationReadyEvent event) {
        started = true;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (started) {
            chain.doFilter(request, response);
            return;
        }
        response.setHeader("Retry-After", "1");
        answer.starting(response);
    }
}
