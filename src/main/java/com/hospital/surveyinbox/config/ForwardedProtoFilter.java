package com.hospital.surveyinbox.config;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Behind a TLS-terminating ingress the request reaches the pod as plain HTTP. With Tomcat's forwarded-header
 * handling off ({@link ClientAddress} says why), {@code X-Forwarded-Proto: https} from a trusted proxy is
 * honoured here and only here: the request is secure, so Spring Security sends HSTS and the console's
 * {@code XSRF-TOKEN} cookie is marked {@code Secure}. From anyone else the header means nothing.
 */
public class ForwardedProtoFilter extends OncePerRequestFilter {

    private final ClientAddress clientAddress;

    public ForwardedProtoFilter(ClientAddress clientAddress) {
        this.clientAddress = clientAddress;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String proto = request.getHeader("X-Forwarded-Proto");
        if (!request.isSecure() && proto != null && "https".equalsIgnoreCase(proto.split(",")[0].strip())
                && clientAddress.isTrustedPeer(request.getRemoteAddr())) {
            chain.doFilter(new Secure(request), response);
            return;
        }
        chain.doFilter(request, response);
    }

    private static final class Secure extends HttpServletRequestWrapper {
        Secure(HttpServletRequest request) {
            super(request);
        }

        @Override
        public boolean isSecure() {
            return true;
        }

        @Override
        public String getScheme() {
            return "https";
        }
    }
}
