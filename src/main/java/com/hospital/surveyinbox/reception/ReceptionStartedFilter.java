package com.hospital.surveyinbox.reception;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.apache.camel.CamelContext;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The reception while Camel's routes are not running: Tomcat takes connections several seconds before Camel has
 * started the routes (and its platform-http endpoints), and again while they stop. Spring MVC would answer 404
 * there, which a sender may take for "this endpoint does not exist" and stop; this answers the contract's 503
 * ("nothing stored, please retry") with Retry-After instead. In Kubernetes the readiness probe keeps such a pod
 * out of the Service; this covers whoever reaches the pod directly (a port-forward, the local run, a sidecar).
 */
public class ReceptionStartedFilter extends OncePerRequestFilter {

    private final CamelContext camel;
    private final ReceptionReplyWriter writer;

    public ReceptionStartedFilter(CamelContext camel, ReceptionReplyWriter writer) {
        this.camel = camel;
        this.writer = writer;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (camel.isStarted()) {
            chain.doFilter(request, response);
            return;
        }
        response.setHeader("Retry-After", "1");
        writer.write(response, 503, "service is starting or stopping; nothing stored, please retry");
    }
}
