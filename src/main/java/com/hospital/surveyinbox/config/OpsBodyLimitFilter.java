package com.hospital.surveyinbox.config;

import com.hospital.surveyinbox.reception.ReceptionBodyLimitFilter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The operator API's request bodies are bounded as the reception's are: a bulk requeue's filter is a few hundred
 * bytes, and platform-http would otherwise read any body into memory whole (Tomcat bounds form posts only). One
 * byte over {@link #MAX_BODY_BYTES}, declared or streamed, answers 413 in the operator API's JSON without
 * reaching the route; a read (GET, HEAD) with any body is a 400 before anything reads it (one of gigabytes
 * filled the heap).
 * Registered after Spring Security: only an operator gets a byte read.
 */
public class OpsBodyLimitFilter extends OncePerRequestFilter {

    /** A bulk requeue with every filter at its longest is under 2 KiB. */
    public static final int MAX_BODY_BYTES = 16 * 1024;

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        // a read carries no body: one sent anyway was read whole before the route ran (gigabytes into the heap);
        // refused before anything reads it, whatever its size (Tomcat then discards up to max-swallow-size, 2 MiB)
        if (isRead(request)
                && (request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null)) {
            writeError(response, 400, "a read carries no body");
            return;
        }
        ReceptionBodyLimitFilter.CachedBodyRequest cached = ReceptionBodyLimitFilter.CachedBodyRequest.read(request, MAX_BODY_BYTES);
        if (cached == null) {
            writeError(response, 413, "body larger than " + MAX_BODY_BYTES + " bytes");
            return;
        }
        chain.doFilter(cached, response);
    }

    /** A read of the operator API: GET or HEAD (no body, no change). */
    static boolean isRead(HttpServletRequest request) {
        return "GET".equals(request.getMethod()) || "HEAD".equals(request.getMethod());
    }

    /** An answer of the operator API written before any route runs: {@code {"error": message}} in UTF-8. */
    static void writeError(HttpServletResponse response, int status, String message) throws IOException {
        response.setStatus(status);
        response.setContentType("application/json");
        response.setCharacterEncoding("UTF-8");
        response.getWriter().write("{\"error\":\"" + message + "\"}"); // constant texts: nothing to escape
    }
}
