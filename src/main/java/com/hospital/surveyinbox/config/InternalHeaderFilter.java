package com.hospital.surveyinbox.config;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Hides inbound headers that name Camel's or Kafka's internals ({@code Camel*}, {@code org.apache.camel.*},
 * {@code kafka.*}) on every HTTP entry: a caller must not be able to steer a route (e.g. set
 * {@code CamelHttpResponseCode} or {@code kafka.KEY}) through headers Camel copies into the exchange.
 */
public class InternalHeaderFilter extends OncePerRequestFilter {

    static boolean internal(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        return n.startsWith("camel") || n.startsWith("org.apache.camel") || n.startsWith("kafka.")
                || n.startsWith("breadcrumbid");
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        boolean any = false;
        for (Enumeration<String> names = request.getHeaderNames(); names.hasMoreElements(); ) {
            if (internal(names.nextElement())) {
                any = true;
                break;
            }
        }
        chain.doFilter(any ? new Filtered(request) : request, response);
    }

    static final class Filtered extends HttpServletRequestWrapper {
        Filtered(HttpServletRequest request) {
            super(request);
        }

        @Override
        public String getHeader(String name) {
            return internal(name) ? null : super.getHeader(name);
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            return internal(name) ? Collections.emptyEnumeration() : super.getHeaders(name);
        }

        @Override
        public Enumeration<String> getHeaderNames() {
            List<String> names = Collections.list(super.getHeaderNames());
            names.removeIf(InternalHeaderFilter::internal);
            return Collections.enumeration(names);
        }

        @Override
        public long getDateHeader(String name) {
            return internal(name) ? -1 : super.getDateHeader(name);
        }

        @Override
        public int getIntHeader(String name) {
            return internal(name) ? -1 : super.getIntHeader(name);
        }
    }
}
