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
 * Hides inbound headers and request parameters that name Camel's or Kafka's internals ({@code Camel*},
 * {@code org.apache.camel.*}, {@code kafka.*}, {@code breadcrumbId}) on every HTTP entry: a caller must not be able
 * to steer a route (e.g. set {@code CamelHttpResponseCode} or {@code kafka.KEY}) through headers Camel copies into
 * the exchange. Camel's HTTP binding copies every query parameter into a header as well: a
 * {@code ?breadcrumbId=…} became the exchange's breadcrumb, which Camel's MDC logging puts on every line the
 * request logs (the prod profile's JSON lines carry every MDC entry), text of the caller's choosing, a patient
 * number as a client's correlation id, in the shipped logs.
 */
public class InternalHeaderFilter extends OncePerRequestFilter {

    private static final List<String> INTERNAL = List.of("camel", "org.apache.camel", "kafka.", "breadcrumbid");

    /**
     * Compared as Camel's header map compares names ({@code String.CASE_INSENSITIVE_ORDER}: each character's upper
     * and lower case), not by lower-casing alone: "breadcrumbıd" (dotless i) stays itself lower-cased, yet Camel
     * took it for {@code breadcrumbId}.
     */
    static boolean internal(String name) {
        return INTERNAL.stream().anyMatch(prefix -> name.regionMatches(true, 0, prefix, 0, prefix.length()));
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        boolean any = internalParameterIn(request.getQueryString());
        for (Enumeration<String> names = request.getHeaderNames(); !any && names.hasMoreElements(); ) {
            any = internal(names.nextElement());
        }
        // a form body's parameters are read only through the wrapper (reading them here would consume the body);
        // no entry takes a form, but a wrapped request hides its internal names too
        String type = request.getContentType();
        any = any || (type != null && type.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded"));
        chain.doFilter(any ? new Filtered(request) : request, response);
    }

    /** Whether a query string names an internal parameter (its names decoded as the container decodes them). */
    static boolean internalParameterIn(String query) {
        if (query == null || query.isEmpty()) {
            return false;
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            String name = eq < 0 ? pair : pair.substring(0, eq);
            try {
                name = java.net.URLDecoder.decode(name, java.nio.charset.StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                // undecodable: the raw name is checked (the container refuses or keeps it as-is)
            }
            if (internal(name)) {
                return true;
            }
        }
        return false;
    }

    private static Enumeration<String> withoutInternal(Enumeration<String> names) {
        List<String> kept = Collections.list(names);
        kept.removeIf(InternalHeaderFilter::internal);
        return Collections.enumeration(kept);
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
            return withoutInternal(super.getHeaderNames());
        }

        @Override
        public long getDateHeader(String name) {
            return internal(name) ? -1 : super.getDateHeader(name);
        }

        @Override
        public int getIntHeader(String name) {
            return internal(name) ? -1 : super.getIntHeader(name);
        }

        @Override
        public String getParameter(String name) {
            return internal(name) ? null : super.getParameter(name);
        }

        @Override
        public String[] getParameterValues(String name) {
            return internal(name) ? null : super.getParameterValues(name);
        }

        @Override
        public Enumeration<String> getParameterNames() {
            return withoutInternal(super.getParameterNames());
        }

        @Override
        public java.util.Map<String, String[]> getParameterMap() {
            java.util.Map<String, String[]> parameters = new java.util.LinkedHashMap<>(super.getParameterMap());
            parameters.keySet().removeIf(InternalHeaderFilter::internal);
            return Collections.unmodifiableMap(parameters);
        }
    }
}
