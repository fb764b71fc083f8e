package com.hospital.surveyinbox.reception;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The reception before the service is started: Tomcat takes connections seconds before Camel has started the
 * routes (and their platform-http endpoints). Spring MVC would answer 404 there, which a sender may take for
 * "this endpoint does not exist"; until the application is ready (the moment readiness turns UP, after Camel's
 * start) this answers the contract's 503 ("nothing stored, please retry") with Retry-After instead. In Kubernetes
 * the readiness probe keeps such a pod out of the Service; this covers whoever reaches the pod directly (a
 * port-forward, the local run). Latched: at shutdown Tomcat stops taking requests before Camel stops.
 */
public class ReceptionStartedFilter extends OncePerRequestFilter implements ApplicationListener<ApplicationReadyEvent> {

    private final ReceptionReplyWriter writer;
    private volatile boolean started;

    public ReceptionStartedFilter(ReceptionReplyWriter writer) {
        this.writer = writer;
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
        writer.write(response, 503, "service is starting; nothing stored, please retry");
    }
}
